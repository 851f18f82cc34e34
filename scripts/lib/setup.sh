# Shared by scripts/test and scripts/demo: check the CUDA toolkit, install missing Debian packages, configure and
# build build/. Sourced, not executed; the caller sets -euo pipefail.

KERNCAST_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KERNCAST_BUILD="${KERNCAST_BUILD:-$KERNCAST_ROOT/build}"
KERNCAST_JOBS="${KERNCAST_JOBS:-$(nproc)}"

KERNCAST_PACKAGES=(
    cmake ninja-build g++ lld
    qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-translations-l10n
    libqscintilla2-qt6-dev libqcustomplot-dev
    nlohmann-json3-dev libdtl-dev libcli11-dev libcurl4-openssl-dev libsqlite3-dev zlib1g-dev libeigen3-dev libgl-dev
    libxgboost-dev
    xvfb xauth clang-format
    openssh-server openssh-client munge slurmctld slurmd slurm-client
)

kerncast_say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
kerncast_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The toolkit is not a Debian package we can install for you (it comes from NVIDIA's own repository), so a missing
# piece stops here with the list of what is missing rather than as a CMake error later.
kerncast_check_cuda() {
    local cuda="${CUDA_HOME:-/usr/local/cuda}"
    local missing=() lib
    [[ -x "$cuda/bin/nvcc" ]] || missing+=("nvcc ($cuda/bin/nvcc)")
    [[ -f "$cuda/include/nvrtc.h" ]] || missing+=("NVRTC header ($cuda/include/nvrtc.h)")
    [[ -f "$cuda/include/nvJitLink.h" ]] || missing+=("nvJitLink header ($cuda/include/nvJitLink.h)")
    [[ -f "$cuda/include/cupti.h" || -f "$cuda/extras/CUPTI/include/cupti.h" ]] ||
        missing+=("CUPTI header (cupti.h in $cuda/include or $cuda/extras/CUPTI/include)")
    for lib in nvrtc nvJitLink; do
        compgen -G "$cuda/lib64/lib$lib.so*" >/dev/null || missing+=("lib$lib.so ($cuda/lib64)")
    done
    compgen -G "$cuda/lib64/libcupti.so*" >/dev/null || compgen -G "$cuda/extras/CUPTI/lib64/libcupti.so*" >/dev/null ||
        missing+=("libcupti.so ($cuda/lib64 or $cuda/extras/CUPTI/lib64)")
    if ((${#missing[@]})); then
        printf 'error: the CUDA toolkit at %s is missing or incomplete:\n' "$cuda" >&2
        printf '  - %s\n' "${missing[@]}" >&2
        printf 'Install the CUDA toolkit (12.x or newer, e.g. the cuda-toolkit package from NVIDIA'"'"'s Debian 12\n' >&2
        printf 'repository) or set CUDA_HOME to where it is installed. A GPU and its driver are not needed to build.\n' >&2
        exit 1
    fi
    export CUDA_HOME="$cuda"
}

kerncast_install_packages() {
    local missing=() pkg
    for pkg in "${KERNCAST_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    kerncast_say "Installing ${missing[*]}"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || kerncast_die "not root and no sudo: install ${missing[*]} and run again"
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

kerncast_build() {
    kerncast_say "Configuring $KERNCAST_BUILD"
    # Line tables only (-g1) unless KERNCAST_DEBUG_INFO=full: a third less compile time, most of the link time.
    cmake -S "$KERNCAST_ROOT" -B "$KERNCAST_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DKERNCAST_DEBUG_INFO="${KERNCAST_DEBUG_INFO:-lines}" -DCUDAToolkit_ROOT="$CUDA_HOME" >/dev/null
    kerncast_say "Building with $KERNCAST_JOBS jobs"
    cmake --build "$KERNCAST_BUILD" -j "$KERNCAST_JOBS"
}

# A GPU is usable when nvidia-smi lists one, or when the device node exists and the driver library loads.
kerncast_has_gpu() {
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
        return 0
    fi
    [[ -e /dev/nvidia0 ]] || return 1
    if command -v python3 >/dev/null; then
        python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null
    else
        ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'
    fi
}

kerncast_setup() {
    kerncast_check_cuda
    kerncast_install_packages
    kerncast_build
}
