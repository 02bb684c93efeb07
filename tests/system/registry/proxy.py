#!/usr/bin/env python3
"""A TCP relay in front of the real registry that fails mid-transfer.

After MODE_BYTES bytes have gone to the client on one connection, it either
stops relaying and holds the connection open ("stall": a registry that hangs)
or closes it ("reset": a registry that dies). "ratelimit" answers every
request with Docker Hub's 429 and its rate-limit headers instead.

Usage: proxy.py LISTEN_PORT UPSTREAM_PORT stall|reset|ratelimit BYTES
"""
import socket
import sys
import threading
import time

LISTEN, UPSTREAM, MODE, LIMIT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


def pipe(src, dst, limit):
    sent = 0
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if limit is not None and sent + len(data) > limit:
                dst.sendall(data[: max(0, limit - sent)])
                if MODE == "stall":
                    time.sleep(3600)
                break
            dst.sendall(data)
            sent += len(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass


def rate_limited(client):
    try:
        client.recv(65536)
        body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}'
        client.sendall(b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                       b"ratelimit-limit: 100;w=21600\r\nratelimit-remaining: 0;w=21600\r\n"
                       b"Retry-After: 3600\r\nConnection: close\r\nContent-Length: "
                       + str(len(body)).encode() + b"\r\n\r\n" + body)
    finally:
        client.close()


def serve(client):
    if MODE == "ratelimit":
        threading.Thread(target=rate_limited, args=(client,), daemon=True).start()
        return
    upstream = socket.create_connection(("127.0.0.1", UPSTREAM))
    threading.Thread(target=pipe, args=(client, upstream, None), daemon=True).start()
    threading.Thread(target=pipe, args=(upstream, client, LIMIT), daemon=True).start()


server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", LISTEN))
server.listen(16)
while True:
    conn, _ = server.accept()
    serve(conn)
