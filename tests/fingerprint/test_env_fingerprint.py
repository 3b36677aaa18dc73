"""triton_aot/compile/env_fingerprint.py: the same environment gives the same fingerprint, a
different triton (or ptxas, or Python) a different one.

Each environment is a real venv (`python -m venv --without-pip`) with an installed-looking
triton: a package with __version__, a bundled `ptxas` that answers --version, and a dist-info
whose RECORD lists file hashes, as pip writes it. The script runs as the repository rule runs
it: `<venv>/bin/python -I env_fingerprint.py`.
"""

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "triton_aot" / "compile" / "env_fingerprint.py"


def _site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


def _make_env(env: Path, triton_version="3.6.0", libtriton=b"libtriton v1",
              ptxas_release="12.8, V12.8.93", absl_version="2.5.1") -> Path:
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    site = _site_packages(env)
    pkg = site / "triton"
    (pkg / "backends" / "nvidia" / "bin").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'__version__ = "{triton_version}"\n')
    (pkg / "_C").mkdir()
    (pkg / "_C" / "libtriton.so").write_bytes(libtriton)
    ptxas = pkg / "backends" / "nvidia" / "bin" / "ptxas"
    ptxas.write_text("#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
                     f"echo 'Cuda compilation tools, release {ptxas_release}'\n")
    ptxas.chmod(0o755)
    _dist_info(site, "triton", triton_version, [pkg / "__init__.py", pkg / "_C" / "libtriton.so", ptxas])
    absl = site / "absl"
    absl.mkdir()
    (absl / "__init__.py").write_text("")
    _dist_info(site, "absl_py", absl_version, [absl / "__init__.py"], dist_name="absl-py")
    return env


def _dist_info(site: Path, name: str, version: str, files, dist_name=None) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name or name}\nVersion: {version}\n")
    lines = []
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        lines.append(f"{f.relative_to(site)},sha256={digest},{f.stat().st_size}")
    lines += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")


def _fingerprint(env: Path) -> dict:
    out = subprocess.run([str(env / "bin" / "python"), "-I", str(SCRIPT)], capture_output=True,
                         text=True, check=True, env={"PATH": os.environ.get("PATH", "/usr/bin")})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return _fingerprint(_make_env(tmp_path_factory.mktemp("a") / "env"))


def test_same_environment_same_fingerprint(base, tmp_path):
    # Same installed files at another path (another machine, another checkout): same key.
    other = _fingerprint(_make_env(tmp_path / "elsewhere" / "env"))
    assert other["fingerprint"] == base["fingerprint"]
    info = json.loads(base["fingerprint"])
    assert info["triton"]["version"] == "3.6.0" and info["triton"]["source"] == "RECORD"
    assert info["absl_py"]["version"] == "2.5.1"
    assert info["ptxas"][0]["version"] == "Cuda compilation tools, release 12.8, V12.8.93"
    assert info["python"]["version"] == "%d.%d.%d" % sys.version_info[:3]
    assert str(tmp_path) not in other["fingerprint"], "the fingerprint must not name paths"


@pytest.mark.parametrize("change", [
    {"libtriton": b"libtriton v2"},      # another triton build, same version string
    {"triton_version": "3.9.0"},         # another triton release
    {"ptxas_release": "13.0, V13.0.48"},  # another ptxas (its hash is in RECORD too)
    {"absl_version": "2.3.1"},
])
def test_different_environment_different_fingerprint(base, tmp_path, change):
    other = _fingerprint(_make_env(tmp_path / "env", **change))
    assert other["fingerprint"] != base["fingerprint"]


def test_watches_what_pip_rewrites(tmp_path):
    env = _make_env(tmp_path / "env")
    watch = _fingerprint(env)["watch"]
    site = _site_packages(env).resolve()
    assert str(site / "triton-3.6.0.dist-info" / "RECORD") in watch
    assert str(site / "absl_py-2.5.1.dist-info" / "RECORD") in watch
    assert str(site / "triton" / "backends" / "nvidia" / "bin" / "ptxas") in watch
    assert os.path.realpath(env / "bin" / "python") in watch


def test_reinstall_in_place_changes_fingerprint(tmp_path):
    # What rctx.watch reacts to: pip replacing triton inside the same environment.
    env = _make_env(tmp_path / "env")
    before = _fingerprint(env)["fingerprint"]
    site = _site_packages(env)
    (site / "triton" / "_C" / "libtriton.so").write_bytes(b"rebuilt")
    record = site / "triton-3.6.0.dist-info" / "RECORD"
    lines = record.read_text().splitlines()
    digest = hashlib.sha256(b"rebuilt").hexdigest()
    lines = [f"triton/_C/libtriton.so,sha256={digest},7" if l.startswith("triton/_C/") else l
             for l in lines]
    record.write_text("\n".join(lines) + "\n")
    assert _fingerprint(env)["fingerprint"] != before
