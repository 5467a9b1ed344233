"""Unpacks a Debian package's files (what `dpkg -x deb folder` does) where dpkg is missing.

A .deb is an ar archive holding debian-binary, control.tar.* and data.tar.*; the files are
data.tar.*'s. Members that would land outside the folder are refused.
"""
import io
import os
import sys
import tarfile


def members(path):
    with open(path, "rb") as deb:
        if deb.read(8) != b"!<arch>\n":
            sys.exit(f"{path}: not a Debian package (no ar header)")
        while True:
            header = deb.read(60)
            if len(header) < 60:
                return
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            data = deb.read(size)
            if size % 2:
                deb.read(1)
            yield name, data


def unpack(path, folder):
    root = os.path.realpath(folder)
    for name, data in members(path):
        if not name.startswith("data.tar"):
            continue
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                target = os.path.realpath(os.path.join(root, member.name))
                if target != root and not target.startswith(root + os.sep):
                    sys.exit(f"{path}: {member.name} would land outside {folder}")
            tar.extractall(root)
        return
    sys.exit(f"{path}: no data.tar member")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: unpack_deb.py package.deb folder")
    unpack(sys.argv[1], sys.argv[2])
