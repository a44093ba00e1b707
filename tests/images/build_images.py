#!/usr/bin/python3
"""tests/images/build_images.py OUT_DIR [NAME...]: the container images pjemu's tests use, made
from this machine's Debian packages, without Docker and without a network.

Run it with Debian's /usr/bin/python3 (standard library only; dpkg-query and dpkg -L for the
package files). For each NAME it writes
  OUT_DIR/oci/NAME/   an OCI image layout (oci-layout, index.json, blobs/sha256/...), layers
                      tar+gzip; index.json's one manifest is annotated with <full ref> as
                      io.containerd.image.name and <tag> as org.opencontainers.image.ref.name
  OUT_DIR/NAME.tar    the same image as `docker save` up to Docker 24 wrote it: manifest.json,
                      repositories, <hex>.json (the config), <id>/{VERSION,json,layer.tar},
                      layers uncompressed (same DiffIDs, same config, same image ID)
and records it in OUT_DIR/images.json (name -> ref, manifest and config digests, layers, sizes).

Images (NAME: ref):
  busybox:    pjemu.test/busybox:1.36 - one layer: Debian's static busybox and its applet links
              in /bin, /etc/passwd (root, app 1000:1000, nobody), /etc/group, /tmp; Cmd ["sh"]
  layers:     pjemu.test/layers:1 - busybox's layer (the same blob) plus three: files, then
              whiteouts (.wh.gone, an opaque /data/dir), then /app/run.sh as the Entrypoint,
              WorkingDir /app, User 1000:1000, GREETING=hello-from-image
  python:     pjemu.test/python:3.11 - Debian's python3 and its Depends closure in two layers
              (the libraries, then the python3* packages), /usr/bin/python, Cmd ["python3"]
  torch:      pjemu.test/pytorch:1.13-cpu - python's two layers plus python3-torch and its
              Depends closure with OpenBLAS (libopenblas0-pthread); WorkingDir /workspace
              (about 1.4 GB, 480 MB compressed; only when named)
  smoke-dist: gcr.io/kubeflow-ci/pytorch-dist-sendrecv-test:1.0 (the example's own name) -
              torch plus /opt/mlkube/dist_sendrecv.py as the Entrypoint, like the Training
              Operator's examples/pytorch/smoke-dist (only when named)
  elastic-echo: docker.io/kubeflow/pytorch-elastic-example-echo:1.0.0 - torch plus
              /workspace/echo.py, `python -m torch.distributed.run` as the Entrypoint, like
              examples/pytorch/elastic/echo (only when named)
With no NAME: busybox layers python.

Exit status: 0 when built (or cached), 2 on a usage error, 77 when a package the images are made
of is not installed (tools/setup installs them).

Deterministic: entries sorted, uid/gid 0 (app's home 1000), mtime 0 for directories, symlinks
and generated files; regular files copied from the host (python, torch) keep their installed
mtime, the .deb's, because the .pyc files Debian compiled at install time (copied too, with
mtime 0) check it; gzip without a name or time. The same inputs give the same digests.
Cached: an image whose outputs exist and whose inputs (this script, the image's definition, and
the path, size and mtime of every host file in it) are unchanged is not rebuilt; a layer already
built for another image (busybox's for layers, python's for torch) is reused by its blob.
"""
import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import time

REGISTRY = "pjemu.test"
DEFAULT_NAMES = ["busybox", "layers", "python"]
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
EPOCH_TEXT = "1970-01-01T00:00:00Z"
GZIP_LEVEL = 6
HERE = os.path.dirname(os.path.abspath(__file__))
SKIPPED_TREES = ("/usr/share/doc", "/usr/share/man", "/usr/share/locale", "/usr/share/lintian")
MERGED_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")  # usrmerge: /bin -> usr/bin
BUSYBOX_APPLETS = ["sh", "ls", "cat", "echo", "env", "id", "sleep", "hostname", "pwd", "mkdir",
                   "rm", "touch", "test", "[", "wc", "grep", "head", "tail", "nslookup", "ps",
                   "kill", "true", "false", "printf", "seq", "stat", "whoami"]

MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"


def usage(stream=sys.stdout):
    stream.write(__doc__)


# ---------------------------------------------------------------------------------------------
# Layer contents: path -> Entry


class Entry:
    """One tar entry. kind: dir, file (data bytes, or src = a host file) or symlink (link)."""
    __slots__ = ("path", "kind", "mode", "uid", "gid", "mtime", "link", "data", "src", "size",
                 "src_mtime")

    def __init__(self, path, kind, mode, uid=0, gid=0, mtime=0, link="", data=None, src=None,
                 size=0, src_mtime=0):
        self.path, self.kind, self.mode = path.strip("/"), kind, mode
        self.uid, self.gid, self.mtime = uid, gid, int(mtime)
        self.link, self.data, self.src = link, data, src
        self.size = len(data) if data is not None else size
        self.src_mtime = src_mtime  # the host file's st_mtime_ns: in the cache key only

    def key(self):
        """What identifies the entry's bytes in the layer, without reading a host file."""
        what = (hashlib.sha256(self.data).hexdigest() if self.data is not None
                else "host:%s@%d" % (self.src, self.src_mtime) if self.src else "")
        return "%s|%s|%o|%d|%d|%d|%s|%d|%s" % (self.path, self.kind, self.mode, self.uid,
                                               self.gid, self.mtime, self.link, self.size, what)


def d(path, mode=0o755, uid=0, gid=0):
    return Entry(path, "dir", mode, uid, gid)


def f(path, text, mode=0o644):
    return Entry(path, "file", mode, data=text.encode() if isinstance(text, str) else text)


def ln(path, target):
    return Entry(path, "symlink", 0o777, link=target)


def host_file(image_path, host_path):
    st = os.stat(host_path)
    return Entry(image_path, "file", stat.S_IMODE(st.st_mode), src=host_path, size=st.st_size,
                 src_mtime=st.st_mtime_ns)


class Layer:
    def __init__(self, created_by, entries):
        self.created_by = created_by
        self.entries = {}
        for e in entries:
            self.add(e)

    def add(self, e):
        self.entries[e.path] = e

    def finish(self, lower):
        """Adds missing parent directories (attributes from a lower layer when it has them)."""
        for path in list(self.entries):
            parent = os.path.dirname(path)
            while parent and parent not in self.entries:
                below = lower.get(parent)
                if below is not None and below.kind == "dir":
                    self.entries[parent] = below
                else:
                    self.entries[parent] = d(parent)
                parent = os.path.dirname(parent)
        return self

    def key(self):
        h = hashlib.sha256()
        for path in sorted(self.entries):
            h.update(self.entries[path].key().encode() + b"\n")
        return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Debian packages: the Depends closure and the files dpkg -L lists


class Missing(Exception):
    """A package the images are made of is not installed: exit 77 (a test skips)."""


class Dpkg:
    def __init__(self):
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package}\t${db:Status-Abbrev}\t${Pre-Depends}\t"
             "${Depends}\t${Provides}\n"], check=True, capture_output=True, text=True).stdout
        self.deps, self.providers = {}, {}
        for line in out.splitlines():
            name, status, pre, dep, provides = line.split("\t")
            if status.strip() != "ii":
                continue
            self.deps[name] = ",".join(x for x in (pre, dep) if x.strip())
            for p in provides.split(","):
                p = _package_name(p)
                if p:
                    self.providers.setdefault(p, []).append(name)

    def installed(self, name):
        return name in self.deps

    def resolve(self, alternatives):
        """The first installed package (or installed provider) of `a | b | c`."""
        for alt in alternatives.split("|"):
            name = _package_name(alt)
            if name in self.deps:
                return name
            if name in self.providers:
                return sorted(self.providers[name])[0]
        return None

    def closure(self, roots):
        seen, todo = set(), [r for r in roots]
        while todo:
            pkg = todo.pop()
            if pkg in seen:
                continue
            if pkg not in self.deps:
                raise Missing("package %s is not installed" % pkg)
            seen.add(pkg)
            for alternatives in self.deps[pkg].split(","):
                if not alternatives.strip():
                    continue
                dep = self.resolve(alternatives)
                if dep is None:
                    raise Missing("%s depends on %s: nothing installed provides it"
                                  % (pkg, alternatives.strip()))
                if dep not in seen:
                    todo.append(dep)
        return seen

    def files(self, packages):
        """Every path dpkg -L lists for the packages (absolute, as dpkg writes them)."""
        packages = sorted(packages)
        out = subprocess.run(["dpkg", "-L"] + packages, check=True, capture_output=True,
                             text=True).stdout
        return sorted({line for line in out.splitlines() if line.startswith("/")})


def _package_name(text):
    return text.strip().split(" ")[0].split("(")[0].split(":")[0].strip()


def merged_path(path):
    """/bin/x -> /usr/bin/x where the host is usrmerged (the images are too)."""
    parts = path.split("/", 2)
    if len(parts) >= 2 and parts[1] in MERGED_DIRS and os.path.islink("/" + parts[1]):
        return "/usr/" + "/".join(parts[1:])
    return path


def skipped(path):
    return any(path == t or path.startswith(t + "/") for t in SKIPPED_TREES)


def host_entries(paths):
    """Entries for host paths (dirs, regular files, symlinks as they are on the host), with
    the .pyc files Debian compiled at install time for the .py files among them."""
    out = {}
    for path in paths:
        if path == "/." or skipped(path):
            continue
        path = merged_path(path)
        try:
            st = os.lstat(path)
        except OSError:
            continue  # a conffile removed by hand, a diverted file: not on disk under this name
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            e = Entry(path, "dir", mode)  # mtime 0: a dir's changes with whatever else lands in it
        elif stat.S_ISREG(st.st_mode):
            e = Entry(path, "file", mode, mtime=st.st_mtime, src=path, size=st.st_size,
                      src_mtime=st.st_mtime_ns)
        elif stat.S_ISLNK(st.st_mode):
            e = Entry(path, "symlink", 0o777, link=os.readlink(path))
        else:
            continue
        out[e.path] = e
    pydirs = {}
    for e in out.values():
        if e.kind == "file" and e.path.endswith(".py"):
            pydirs.setdefault(os.path.dirname(e.path), set()).add(os.path.basename(e.path)[:-3])
    for pydir, modules in sorted(pydirs.items()):
        cache = "/%s/__pycache__" % pydir
        try:
            names = sorted(os.listdir(cache))
        except OSError:
            continue
        kept = [n for n in names if n.split(".", 1)[0] in modules and n.endswith(".pyc")]
        if kept:
            st = os.lstat(cache)
            out[cache.strip("/")] = Entry(cache, "dir", stat.S_IMODE(st.st_mode))
            for n in kept:
                p = cache + "/" + n
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode):
                    # mtime 0: the .pyc's own time (the install's) is checked by nothing.
                    out[p.strip("/")] = Entry(p, "file", stat.S_IMODE(st.st_mode), src=p,
                                              size=st.st_size, src_mtime=st.st_mtime_ns)
    return out


def alternatives():
    """Every update-alternatives group on the host: (names and links, choices, the host's
    choice), from dpkg's database (/var/lib/dpkg/alternatives/NAME: mode, the master link,
    slave name/link pairs, a blank line, then per choice its path, priority and one line per
    slave, its path or blank)."""
    groups = []
    admin = "/var/lib/dpkg/alternatives"
    for name in sorted(os.listdir(admin)) if os.path.isdir(admin) else []:
        try:
            with open(os.path.join(admin, name)) as fh:
                lines = fh.read().split("\n")
        except OSError:
            continue
        if len(lines) < 3:
            continue
        links = [(name, lines[1])]
        i = 2
        while i + 1 < len(lines) and lines[i]:
            links.append((lines[i], lines[i + 1]))
            i += 2
        i += 1
        choices = []
        while i + 1 + len(links) - 1 < len(lines) and lines[i]:
            paths = [lines[i]] + lines[i + 2:i + 1 + len(links)]
            try:
                priority = int(lines[i + 1])
            except ValueError:
                break
            choices.append((priority, paths))
            i += 1 + len(links)
        try:
            current = os.readlink("/etc/alternatives/" + name)
        except OSError:
            current = None
        groups.append((links, choices, current))
    return groups


def add_alternatives(layer, present):
    """The update-alternatives links for the choices in the image (`present`: every path so
    far, this layer's included) that no lower layer made yet: the host's choice when the image
    has it, else the image's choice of highest priority."""
    for links, choices, current in alternatives():
        master = links[0][0]
        if ("etc/alternatives/" + master) in present:
            continue
        usable = [(prio, paths) for prio, paths in choices
                  if merged_path(paths[0]).strip("/") in present]
        if not usable:
            continue
        chosen = [paths for _, paths in usable if paths[0] == current]
        paths = chosen[0] if chosen else max(usable, key=lambda c: c[0])[1]
        for (alt, link), value in zip(links, paths):
            if not value or merged_path(value).strip("/") not in present:
                continue
            link_path = merged_path(link).strip("/")
            if os.path.dirname(link_path) not in present:
                continue
            for e in (ln("etc/alternatives/" + alt, value),
                      ln(link_path, "/etc/alternatives/" + alt)):
                layer.add(e)
                present[e.path] = e


# ---------------------------------------------------------------------------------------------
# The images


PASSWD = """root:x:0:0:root:/root:/bin/sh
app:x:1000:1000:app:/home/app:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
app:x:1000:
nogroup:x:65534:
"""


def skeleton(merged):
    """The directories and account files every image has."""
    entries = [d("dev"), d("proc"), d("sys"), d("root", 0o700), d("home"),
               d("home/app", 0o755, 1000, 1000), d("tmp", 0o1777), d("var"), d("var/tmp", 0o1777),
               d("etc"), f("etc/passwd", PASSWD), f("etc/group", GROUP)]
    if merged:
        entries += [d("usr"), d("usr/bin"), d("usr/sbin"), d("usr/lib"), d("usr/lib64")]
        entries += [ln(x, "usr/" + x) for x in ("bin", "sbin", "lib", "lib64")]
    return entries


def busybox_layer():
    status = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", "busybox-static"],
                            capture_output=True, text=True).stdout
    if status.strip() != "ii" or not os.path.isfile("/bin/busybox"):
        raise Missing("busybox-static (a static /bin/busybox) is not installed")
    entries = skeleton(merged=False) + [d("bin"), host_file("bin/busybox", "/bin/busybox")]
    entries += [ln("bin/" + applet, "busybox") for applet in BUSYBOX_APPLETS]
    return Layer("COPY busybox (Debian busybox-static) and its applet links / # build_images.py",
                 entries)


RUN_SH = """#!/bin/sh
# pjemu.test/layers:1: what the image's four layers left, as the container sees it.
echo "greeting=${GREETING:-} user=$(id -u):$(id -g) pwd=$(pwd)"
for f in /data/keep /data/gone /data/dir/a /data/dir/b /etc/motd; do
  if [ -e "$f" ]; then echo "$f: $(cat "$f")"; else echo "$f: absent"; fi
done
echo "args: $*"
"""


def image_busybox(ctx):
    return {"ref": REGISTRY + "/busybox:1.36", "layers": [busybox_layer()],
            "config": {"Env": [PATH_ENV], "Cmd": ["sh"]}}


def image_layers(ctx):
    l2 = Layer("COPY data /data; COPY motd /etc/motd # build_images.py", [
        d("data"), f("data/keep", "keep from layer 2\n"), f("data/gone", "gone in layer 3\n"),
        d("data/dir"), f("data/dir/a", "a from layer 2, hidden by layer 3\n"),
        f("etc/motd", "motd from layer 2\n")])
    l3 = Layer("RUN rm /data/gone && rm -r /data/dir && mkdir /data/dir && echo b > /data/dir/b",
               [d("data"), f("data/.wh.gone", b""), d("data/dir"), f("data/dir/.wh..wh..opq", b""),
                f("data/dir/b", "b from layer 3\n")])
    l4 = Layer("COPY run.sh /app/run.sh # build_images.py",
               [d("app"), f("app/run.sh", RUN_SH, 0o755)])
    return {"ref": REGISTRY + "/layers:1", "layers": [busybox_layer(), l2, l3, l4],
            "config": {"Env": [PATH_ENV, "GREETING=hello-from-image"],
                       "Entrypoint": ["/bin/sh", "/app/run.sh"], "WorkingDir": "/app",
                       "User": "1000:1000"}}


OS_RELEASE = """PRETTY_NAME="pjemu test image (Debian 12 packages)"
NAME="pjemu-test"
ID=pjemu-test
ID_LIKE=debian
VERSION_ID="12"
"""


def _is_python_package(name):
    return re.match(r"^(lib)?python3", name) is not None


def python_layers(ctx):
    """Two layers: the libraries (libc6 and the rest of the closure, plus dash for /bin/sh),
    then the python3* packages."""
    if "python" not in ctx.cache:
        dpkg = ctx.dpkg()
        roots = ["python3"] + (["dash"] if dpkg.installed("dash") else [])
        closure = dpkg.closure(roots)
        base_pkgs = sorted(p for p in closure if not _is_python_package(p))
        py_pkgs = sorted(p for p in closure if _is_python_package(p))
        base = Layer("COPY libraries of Debian packages %s # build_images.py" % " ".join(base_pkgs),
                     skeleton(merged=True) + [f("etc/os-release", OS_RELEASE)])
        for e in host_entries(dpkg.files(base_pkgs)).values():
            if e.path not in base.entries:
                base.add(_keep(e))
        present = dict(base.entries)
        add_alternatives(base, present)
        base.finish({})
        py = Layer("COPY Debian packages %s; ln -s python3 /usr/bin/python # build_images.py"
                   % " ".join(py_pkgs), [])
        for e in host_entries(dpkg.files(py_pkgs)).values():
            py.add(_keep(e))
        py.add(ln("usr/bin/python", "python3"))
        present.update(py.entries)
        add_alternatives(py, present)
        py.finish(present)
        ctx.cache["python"] = ([base, py], closure, present)
    return ctx.cache["python"]


def _keep(e):
    e.uid = e.gid = 0
    return e


PYTHON_ENV = [PATH_ENV, "LANG=C.UTF-8"]


def image_python(ctx):
    layers, _, _ = python_layers(ctx)
    return {"ref": REGISTRY + "/python:3.11", "layers": layers,
            "config": {"Env": PYTHON_ENV, "Cmd": ["python3"]}}


def torch_layers(ctx):
    if "torch" not in ctx.cache:
        layers, py_closure, present = python_layers(ctx)
        present = dict(present)
        dpkg = ctx.dpkg()
        # The BLAS the host's torch uses (libblas.so.3 is an alternative; the Depends name
        # reference BLAS first): OpenBLAS, when installed (tools/setup installs it).
        roots = ["python3-torch"] + (["libopenblas0-pthread"]
                                     if dpkg.installed("libopenblas0-pthread") else [])
        pkgs = sorted(dpkg.closure(roots) - py_closure)
        torch = Layer("COPY Debian packages %s; mkdir /workspace # build_images.py"
                      % " ".join(pkgs), [d("workspace")])
        for e in host_entries(dpkg.files(pkgs)).values():
            torch.add(_keep(e))
        present.update(torch.entries)
        add_alternatives(torch, present)
        torch.finish(present)
        ctx.cache["torch"] = (layers + [torch], present)
    return ctx.cache["torch"]


def image_torch(ctx):
    layers, _ = torch_layers(ctx)
    return {"ref": REGISTRY + "/pytorch:1.13-cpu", "layers": layers,
            "config": {"Env": PYTHON_ENV, "Cmd": ["python3"], "WorkingDir": "/workspace"}}


def image_smoke_dist(ctx):
    layers, _ = torch_layers(ctx)
    with open(os.path.join(HERE, "dist_sendrecv.py"), "rb") as fh:
        script = fh.read()
    smoke = Layer("RUN mkdir -p /opt/mlkube; COPY dist_sendrecv.py /opt/mlkube/",
                  [d("opt"), d("opt/mlkube"), f("opt/mlkube/dist_sendrecv.py", script)])
    # The example's own image name, so that its YAML runs verbatim once the archive is loaded.
    return {"ref": "gcr.io/kubeflow-ci/pytorch-dist-sendrecv-test:1.0", "layers": layers + [smoke],
            "config": {"Env": PYTHON_ENV, "WorkingDir": "/workspace",
                       "Entrypoint": ["python", "/opt/mlkube/dist_sendrecv.py"]}}


def image_elastic_echo(ctx):
    layers, _ = torch_layers(ctx)
    with open(os.path.join(HERE, "echo.py"), "rb") as fh:
        script = fh.read()
    echo = Layer("ADD echo.py echo.py", [d("workspace"), f("workspace/echo.py", script)])
    # Like examples/pytorch/elastic/echo/Dockerfile (WORKDIR /workspace, PYTHONPATH, torch's
    # elastic launcher as the Entrypoint); Debian's torchrun (torch 1.13 on Python 3.11) needs
    # PET_REDIRECTS/PET_TEE set (see fixtures/images.yaml), so the image's Env has them.
    return {"ref": "docker.io/kubeflow/pytorch-elastic-example-echo:1.0.0",
            "layers": layers + [echo],
            "config": {"Env": PYTHON_ENV + ["PYTHONPATH=/workspace", "PET_REDIRECTS=1",
                                            "PET_TEE=1"],
                       "WorkingDir": "/workspace",
                       "Entrypoint": ["python", "-m", "torch.distributed.run"]}}


IMAGES = {"busybox": image_busybox, "layers": image_layers, "python": image_python,
          "torch": image_torch, "smoke-dist": image_smoke_dist,
          "elastic-echo": image_elastic_echo}


class Context:
    def __init__(self):
        self.cache = {}
        self._dpkg = None

    def dpkg(self):
        if self._dpkg is None:
            self._dpkg = Dpkg()
        return self._dpkg


# ---------------------------------------------------------------------------------------------
# Writing layers, OCI layouts and docker-save archives


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


class HashingWriter:
    """Hashes and counts what passes through to `sink`."""

    def __init__(self, sink):
        self.sink, self.sha, self.size = sink, hashlib.sha256(), 0

    def write(self, data):
        self.sha.update(data)
        self.size += len(data)
        return self.sink.write(data)

    def flush(self):
        pass


def tar_info(e):
    ti = tarfile.TarInfo(e.path + ("/" if e.kind == "dir" else ""))
    ti.mode, ti.uid, ti.gid, ti.mtime = e.mode, e.uid, e.gid, e.mtime
    ti.uname = ti.gname = ""
    if e.kind == "dir":
        ti.type = tarfile.DIRTYPE
    elif e.kind == "symlink":
        ti.type, ti.linkname = tarfile.SYMTYPE, e.link
    else:
        ti.type, ti.size = tarfile.REGTYPE, e.size
    return ti


def write_layer(layer, path):
    """Writes the layer as tar+gzip to `path`; returns its descriptor facts."""
    with open(path, "wb") as raw:
        compressed = HashingWriter(raw)
        with gzip.GzipFile(filename="", mode="wb", compresslevel=GZIP_LEVEL,
                           fileobj=compressed, mtime=0) as gz:
            plain = HashingWriter(gz)
            with tarfile.open(fileobj=plain, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for p in sorted(layer.entries):
                    e = layer.entries[p]
                    if e.kind == "file" and e.data is None:
                        with open(e.src, "rb") as fh:
                            st = os.fstat(fh.fileno())
                            if st.st_size != e.size:
                                raise SystemExit("build_images.py: %s changed while building"
                                                 % e.src)
                            tar.addfile(tar_info(e), fh)
                    elif e.kind == "file":
                        tar.addfile(tar_info(e), io.BytesIO(e.data))
                    else:
                        tar.addfile(tar_info(e))
    return {"digest": "sha256:" + compressed.sha.hexdigest(), "size": compressed.size,
            "diff_id": "sha256:" + plain.sha.hexdigest(), "usize": plain.size}


class Builder:
    def __init__(self, out):
        self.out = out
        self.work = os.path.join(out, ".work")
        self.layer_db_path = os.path.join(out, ".cache", "layers.json")
        os.makedirs(os.path.join(out, "oci"), exist_ok=True)
        os.makedirs(os.path.dirname(self.layer_db_path), exist_ok=True)
        os.makedirs(os.path.join(out, ".stamps"), exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.layer_db = _read_json(self.layer_db_path, {})

    def find_blob(self, digest):
        hexd = digest.split(":", 1)[1]
        for place in [self.work] + [os.path.join(self.out, "oci", n, "blobs", "sha256")
                                    for n in sorted(os.listdir(os.path.join(self.out, "oci")))]:
            p = os.path.join(place, hexd)
            if os.path.isfile(p):
                return p
        return None

    def layer(self, layer):
        """The layer's facts and the path of its gzip blob, built unless built before."""
        key = layer.key()
        facts = self.layer_db.get(key)
        if facts:
            blob = self.find_blob(facts["digest"])
            if blob and os.path.getsize(blob) == facts["size"]:
                return facts, blob, False
        tmp = os.path.join(self.work, "layer-%s.tmp" % key[:16])
        facts = write_layer(layer, tmp)
        blob = os.path.join(self.work, facts["digest"].split(":", 1)[1])
        os.replace(tmp, blob)
        self.layer_db[key] = facts
        _write_json(self.layer_db_path, self.layer_db)
        return facts, blob, True

    def build(self, name, spec, inputs):
        ref = spec["ref"]
        repo, tag = ref.rsplit(":", 1)
        layers = []
        for layer in spec["layers"]:
            facts, blob, _ = self.layer(layer)
            layers.append((layer, facts, blob))
        diff_ids = [facts["diff_id"] for _, facts, _ in layers]
        config = {
            "architecture": "amd64", "os": "linux", "created": EPOCH_TEXT,
            "config": spec["config"],
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "history": [{"created": EPOCH_TEXT, "created_by": layer.created_by,
                         "comment": "pjemu tests/images/build_images.py"}
                        for layer, _, _ in layers],
        }
        config_bytes = canonical_json(config)
        config_digest = "sha256:" + sha256_hex(config_bytes)
        manifest = {
            "schemaVersion": 2, "mediaType": MT_MANIFEST,
            "config": {"mediaType": MT_CONFIG, "digest": config_digest, "size": len(config_bytes)},
            "layers": [{"mediaType": MT_LAYER_GZIP, "digest": facts["digest"],
                        "size": facts["size"]} for _, facts, _ in layers],
        }
        manifest_bytes = canonical_json(manifest)
        manifest_digest = "sha256:" + sha256_hex(manifest_bytes)
        index = {
            "schemaVersion": 2, "mediaType": MT_INDEX,
            "manifests": [{"mediaType": MT_MANIFEST, "digest": manifest_digest,
                           "size": len(manifest_bytes),
                           "platform": {"architecture": "amd64", "os": "linux"},
                           "annotations": {"io.containerd.image.name": ref,
                                           "org.opencontainers.image.ref.name": tag}}],
        }

        # The OCI layout, written beside the old one and swapped in.
        final = os.path.join(self.out, "oci", name)
        tmp = os.path.join(self.out, "oci", ".%s.tmp" % name)
        shutil.rmtree(tmp, ignore_errors=True)
        blobs = os.path.join(tmp, "blobs", "sha256")
        os.makedirs(blobs)
        with open(os.path.join(tmp, "oci-layout"), "wb") as fh:
            fh.write(canonical_json({"imageLayoutVersion": "1.0.0"}))
        for data, digest in ((config_bytes, config_digest), (manifest_bytes, manifest_digest)):
            with open(os.path.join(blobs, digest.split(":", 1)[1]), "wb") as fh:
                fh.write(data)
        for _, facts, blob in layers:
            dest = os.path.join(blobs, facts["digest"].split(":", 1)[1])
            if not os.path.exists(dest):
                try:
                    os.link(blob, dest)
                except OSError:
                    shutil.copyfile(blob, dest)
        with open(os.path.join(tmp, "index.json"), "wb") as fh:
            fh.write(canonical_json(index))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        final_blobs = os.path.join(final, "blobs", "sha256")

        # The docker-save archive (Docker <= 24): v1 layer directories with uncompressed layers.
        ids, parent, chain = [], None, None
        for i, (_, facts, _) in enumerate(layers):
            diff = facts["diff_id"]
            chain = diff if chain is None else "sha256:" + sha256_hex(
                (chain + " " + diff).encode())
            seed = "%s %s" % (parent or "", chain)
            if i == len(layers) - 1:
                seed += " " + config_digest
            ids.append(sha256_hex(seed.encode()))
            parent = ids[-1]
        files = {}
        for i, (_, facts, _) in enumerate(layers):
            v1 = {"id": ids[i], "created": EPOCH_TEXT, "os": "linux",
                  "container_config": {"Cmd": None, "Entrypoint": None, "Env": None}}
            if i:
                v1["parent"] = ids[i - 1]
            if i == len(layers) - 1:
                v1.update({"architecture": "amd64", "config": spec["config"]})
            files[ids[i] + "/VERSION"] = b"1.0"
            files[ids[i] + "/json"] = canonical_json(v1)
            files[ids[i] + "/layer.tar"] = (os.path.join(final_blobs,
                                                         facts["digest"].split(":", 1)[1]),
                                            facts["usize"])
        config_hex = config_digest.split(":", 1)[1]
        files[config_hex + ".json"] = config_bytes
        files["manifest.json"] = canonical_json([{
            "Config": config_hex + ".json", "RepoTags": [ref],
            "Layers": [i + "/layer.tar" for i in ids]}])
        files["repositories"] = canonical_json({repo: {tag: ids[-1]}})
        tar_path = os.path.join(self.out, name + ".tar")
        tar_tmp = os.path.join(self.out, ".%s.tar.tmp" % name)
        with tarfile.open(tar_tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(set(files) | set(i + "/" for i in ids)):
                if path.endswith("/"):
                    ti = tarfile.TarInfo(path)
                    ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 0
                    tar.addfile(ti)
                    continue
                ti = tarfile.TarInfo(path)
                ti.mode, ti.mtime = 0o644, 0
                content = files[path]
                if isinstance(content, tuple):
                    blob, usize = content
                    ti.size = usize
                    with gzip.open(blob, "rb") as fh:
                        tar.addfile(ti, fh)
                else:
                    ti.size = len(content)
                    tar.addfile(ti, io.BytesIO(content))
        os.replace(tar_tmp, tar_path)

        record = {"ref": ref, "manifest_digest": manifest_digest, "config_digest": config_digest,
                  "inputs": inputs,
                  "oci_size": sum(f["size"] for _, f, _ in layers) + len(config_bytes)
                  + len(manifest_bytes),
                  "tar_size": os.path.getsize(tar_path),
                  "layers": [{"digest": f["digest"], "diff_id": f["diff_id"], "size": f["size"],
                              "usize": f["usize"]} for _, f, _ in layers]}
        return record

    def cleanup(self):
        """Drops built blobs that are now linked into a layout (the layer db finds them there)."""
        for n in os.listdir(self.work):
            p = os.path.join(self.work, n)
            if n.endswith(".tmp") or os.stat(p).st_nlink > 1:
                os.unlink(p)


def _read_json(path, default):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return default


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def script_hash():
    h = hashlib.sha256()
    for n in ("build_images.py", "dist_sendrecv.py"):
        with open(os.path.join(HERE, n), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        usage()
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        usage(sys.stderr)
        return 2
    out = os.path.abspath(argv[1])
    names = argv[2:] or DEFAULT_NAMES
    for n in names:
        if n not in IMAGES:
            sys.stderr.write("build_images.py: unknown image %r (known: %s)\n"
                             % (n, " ".join(IMAGES)))
            return 2
    os.makedirs(out, exist_ok=True)
    lock = open(os.path.join(out, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per OUT_DIR at a time
    builder = Builder(out)
    ctx = Context()
    scripts = script_hash()
    summary_path = os.path.join(out, "images.json")
    summary = _read_json(summary_path, {})
    for name in names:
        start = time.monotonic()
        try:
            spec = IMAGES[name](ctx)
        except Missing as e:
            sys.stderr.write("build_images.py: %s: %s; tools/setup installs the tests' packages "
                             "(busybox-static, python3, python3-torch)\n" % (name, e))
            return 77
        h = hashlib.sha256()
        h.update(("%s\n%s\n%s\n" % (scripts, name, spec["ref"])).encode())
        h.update(canonical_json(spec["config"]))
        for layer in spec["layers"]:
            h.update(("\n" + layer.created_by + "\n" + layer.key()).encode())
        inputs = h.hexdigest()
        stamp_path = os.path.join(out, ".stamps", name + ".json")
        stamp = _read_json(stamp_path, {})
        cached = (stamp.get("inputs") == inputs
                  and os.path.isfile(os.path.join(out, "oci", name, "index.json"))
                  and os.path.isfile(os.path.join(out, name + ".tar")))
        if not cached:
            _write_json(stamp_path, {})
            stamp = builder.build(name, spec, inputs)
            _write_json(stamp_path, stamp)
        summary[name] = stamp
        print("%-10s %-44s %s  %s oci, %s tar, %d layers, %.1f s%s" % (
            name, stamp["ref"], stamp["manifest_digest"], human(stamp["oci_size"]),
            human(stamp["tar_size"]), len(stamp["layers"]), time.monotonic() - start,
            " (cached)" if cached else ""), flush=True)
    builder.cleanup()
    _write_json(summary_path, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
