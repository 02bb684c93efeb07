"""What dpkg's own file lists say a Debian root holds: the expected side of
the attribution tests, worked out without imgsmith."""
import json
import os


def package_lists(root):
    """Package name (without :arch) -> its .list files."""
    info = os.path.join(root, "var/lib/dpkg/info")
    lists = {}
    for name in os.listdir(info):
        if name.endswith(".list"):
            lists.setdefault(name[:-5].split(":")[0], []).append(os.path.join(info, name))
    return lists


def package_bytes(root, lists, packages, with_bytecode=False):
    """The regular files the packages' lists name, each inode once, through
    the merged-/usr symlinks; with_bytecode adds the byte code compiled from
    their .py files after install (DIR/__pycache__/NAME.*.pyc)."""
    root = os.path.realpath(root)
    seen, total = set(), 0

    def add(path):
        nonlocal total
        st = os.lstat(path)
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size

    for pkg in packages:
        for lst in lists[pkg]:
            for line in open(lst):
                path = os.path.realpath(os.path.join(root, line.strip().lstrip("/")))
                if not path.startswith(root) or not os.path.isfile(path) or os.path.islink(path):
                    continue
                add(path)
                if with_bytecode and path.endswith(".py"):
                    cache = os.path.join(os.path.dirname(path), "__pycache__")
                    stem = os.path.basename(path)[:-3] + "."
                    if os.path.isdir(cache):
                        for c in os.listdir(cache):
                            if c.startswith(stem) and c.endswith(".pyc") and c[len(stem):].count(".") >= 1:
                                add(os.path.join(cache, c))
    return total


def load(argv):
    """The attribution tests' inputs, from their command line: argv[1]
    imgsmith's JSON report, argv[2] the unpacked root. Gives the report, the
    root, its package lists and the report's categories by name, checked to
    add up to the image's final bytes."""
    report = json.load(open(argv[1]))
    root = argv[2]
    cats = {c["name"]: c for c in report["categories"]}
    assert sum(c["bytes"] for c in cats.values()) == report["size"]["final_bytes"], "categories do not sum"
    return report, root, package_lists(root), cats
