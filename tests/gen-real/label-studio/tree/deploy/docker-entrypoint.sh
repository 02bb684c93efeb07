#!/bin/bash
# starts nginx + uwsgi / label-studio
exec "$@"
