"""The Docker packaging stays correct by construction (no Docker engine runs in CI)."""
import os
import re
import shutil
import subprocess

import pytest
import yaml

from hearthharness import REPO


def test_compose_file_parses_and_exposes_every_port():
    with open(os.path.join(REPO, "docker-compose.yml")) as f:
        compose = yaml.safe_load(f)
    svc = compose["services"]["hearth"]
    published = {int(p.split(":")[-1]) for p in svc["ports"]}
    assert published == {4400, 9099, 8080, 9000, 8000, 4000, 9199}
    assert "0.0.0.0" in svc["command"]
    mounts = {v.split(":")[1] for v in svc["volumes"]}
    assert mounts == {"/work/emulator-data", "/work/rules"}
    # The rules file the command names comes from the ./rules mount, which the repo provides.
    rules = svc["command"][svc["command"].index("--rules") + 1]
    assert rules == "/work/rules/firestore.rules" and os.path.exists(os.path.join(REPO, "rules", "firestore.rules"))


def test_dockerfile_is_multi_stage_with_the_runtime_libraries():
    text = open(os.path.join(REPO, "Dockerfile")).read()
    stages = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert len(stages) == 2 and stages[0].startswith("swift:") and "slim" in stages[1]
    for lib in ["libsqlite3-0", "libssl3", "libmicrohttpd12", "libnghttp2-14"]:
        assert lib in text
    for port in ["4400", "9099", "8080", "9000", "8000", "4000", "9199"]:
        assert port in text


def _dockerfile():
    return open(os.path.join(REPO, "Dockerfile")).read()


def _stages():
    """The text of each stage, from its FROM line to the next."""
    return re.split(r"^(?=FROM )", _dockerfile(), flags=re.M)[1:]


def _build_stage_copies():
    """(source, destination) of every COPY in the build stage, in order (no --from copies there)."""
    build_stage = _stages()[0]
    copies = []
    for line in build_stage.splitlines():
        m = re.match(r"^COPY\s+(?!--)(\S+)\s+(\S+)\s*$", line)
        if m:
            copies.append((m.group(1), m.group(2)))
    return copies


def test_dockerfile_swift_matches_the_toolchain():
    image = re.search(r"^FROM\s+swift:(\d+)\.(\d+)", _dockerfile(), re.M)
    assert image, "the build stage must use an official swift:X.Y image"
    local = re.search(r"Swift version (\d+)\.(\d+)", subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout
                      + subprocess.run(["swift", "--version"], capture_output=True, text=True).stderr)
    assert local and image.groups() == local.groups(), f"Dockerfile uses swift:{'.'.join(image.groups())}, the toolchain is {local and '.'.join(local.groups())}"


def _makefile_release_flags():
    """RELEASE_FLAGS from the Makefile (continuation lines joined), split into words."""
    text = open(os.path.join(REPO, "Makefile")).read().replace("\\\n", " ")
    m = re.search(r"^RELEASE_FLAGS\s*:?=(.*)$", text, re.M)
    assert m, "the Makefile defines RELEASE_FLAGS for its release build"
    return m.group(1).split()


def test_dockerfile_builds_release_with_the_makefiles_flags():
    """The image's binary is built as `make build` builds it (static runtime, lld with packed
    relocations, start-up code ordered), so the image has the idle memory docs/benchmarks.md measures."""
    text = _dockerfile().replace("\\\n", " ")
    m = re.search(r"^RUN swift build -c release --product hearth (.*?)&&", text, re.M)
    assert m, "the build stage builds the hearth product in release"
    make = [w.replace("$(CURDIR)", "/src") for w in _makefile_release_flags()]
    assert m.group(1).split() == make
    order = [w for w in make if w.startswith("--symbol-ordering-file=")]
    assert order and ("linker", "./linker") in _build_stage_copies()
    assert os.path.getsize(os.path.join(REPO, order[0].split("=", 1)[1].replace("/src/", "", 1))) > 0


def _context_build():
    """Copies exactly what the Dockerfile's build stage copies into .build/docker-context/src (mtimes
    kept, so a second run rebuilds nothing) and builds the hearth product there."""
    root = os.path.join(REPO, ".build", "docker-context")
    src = os.path.join(root, "src")
    if os.path.exists(src):
        shutil.rmtree(src)
    os.makedirs(src)
    copies = _build_stage_copies()
    assert {s for s, _ in copies} >= {"Package.swift", "Sources"}
    for source, dest in copies:
        target = os.path.normpath(os.path.join(src, dest if not dest.endswith("/") else os.path.join(dest, os.path.basename(source))))
        origin = os.path.join(REPO, source)
        if os.path.isdir(origin):
            shutil.copytree(origin, target, dirs_exist_ok=True)
        else:
            shutil.copy2(origin, target)
    r = subprocess.run(["swift", "build", "--product", "hearth", "--scratch-path", os.path.join(root, "build")],
                       cwd=src, capture_output=True, text=True)
    assert r.returncode == 0, "the package does not build from the files the Dockerfile copies:\n" + r.stdout[-4000:] + r.stderr[-4000:]
    return os.path.join(root, "build", "debug", "hearth")


@pytest.fixture(scope="module")
def context_binary():
    return _context_build()


def test_the_package_builds_from_exactly_what_the_dockerfile_copies(context_binary):
    r = subprocess.run([context_binary, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("hearth ")
    # The rules the runtime stage ships come from the build stage's context.
    assert "COPY --from=build /src/rules /work/rules" in _dockerfile()
    assert os.path.exists(os.path.join(REPO, ".build", "docker-context", "src", "rules", "firestore.rules"))


# Libraries every debian:bookworm-slim image has (libc6, and what apt itself links).
SLIM_BASE = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}


def test_the_runtime_stage_installs_every_library_hearth_links(context_binary):
    """Each shared library the binary needs directly (readelf NEEDED) either comes with the Swift
    toolchain (linked statically in the image: --static-swift-stdlib) or is a Debian package the
    runtime stage installs, so the image runs without the -dev packages."""
    runtime = _stages()[-1]
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]",
                        subprocess.run(["readelf", "-d", context_binary], capture_output=True, text=True).stdout)
    resolved = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(["ldd", context_binary], capture_output=True, text=True).stdout, re.M))
    toolchain = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("swift"))))
    missing = []
    for lib in needed:
        path = os.path.realpath(resolved.get(lib, ""))
        if not path or path.startswith(toolchain):
            continue
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout.split(":")[0]
        if owner and owner not in SLIM_BASE and not re.search(rf"\b{re.escape(owner)}\b", runtime):
            missing.append(f"{lib} ({owner})")
    assert not missing, f"the runtime stage does not install: {', '.join(missing)}"
