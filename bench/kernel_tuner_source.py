"""Imports Kernel Tuner from a source checkout (it is not among Kerncast's dependencies), with Debian's Python.

Kernel Tuner reads its own version from package metadata, and imports python-constraint, which Debian does not
package: both come from source folders given by the user. Nothing is installed; a temporary folder holds the
metadata for the life of the process.
"""
import atexit
import os
import re
import shutil
import sys
import tempfile


def import_kernel_tuner(kernel_tuner_src, constraint_src):
    """Returns (kernel_tuner module, its version, python-constraint's version)."""
    for folder, probe in ((kernel_tuner_src, "kernel_tuner/__init__.py"), (constraint_src, "constraint/__init__.py")):
        if not os.path.isfile(os.path.join(folder, probe)):
            sys.exit(f"error: {folder} is not a source checkout (no {probe})")
    version = _pyproject_version(kernel_tuner_src) or "0"
    meta = tempfile.mkdtemp(prefix="kerncast-kt-")
    atexit.register(shutil.rmtree, meta, True)
    info = os.path.join(meta, f"kernel_tuner-{version}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: kernel_tuner\nVersion: {version}\n")
    sys.path[:0] = [meta, constraint_src, kernel_tuner_src]
    import constraint
    import kernel_tuner

    return kernel_tuner, version, getattr(constraint, "__version__", None) or _pyproject_version(constraint_src) or "source"


def _pyproject_version(folder):
    """The version a source checkout declares in its pyproject.toml, or None."""
    try:
        with open(os.path.join(folder, "pyproject.toml")) as f:
            m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None
