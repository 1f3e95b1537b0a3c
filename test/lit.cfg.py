# -*- Python -*-
# lit configuration of the Tofu test suite.

import os

import lit
import lit.formats
from lit.llvm import llvm_config

config.name = "Tofu"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".tdl", ".test", ".json", ".py"]
config.excludes = ["Inputs", "Utils", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tofu_obj_root, "test")

# FileCheck, not, count and split-file come from LLVM; `not` must be found on
# PATH for RUN lines that start with it.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tofu_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
# `REQUIRES: long-tests`: tests too slow for the CI budget (30 min on 2
# cores), run with `lit --param long-tests=1` or TOFU_LONG_TESTS=1; lit lists
# them as UNSUPPORTED otherwise.
if lit_config.params.get("long-tests") or os.environ.get("TOFU_LONG_TESTS"):
    config.available_features.add("long-tests")

# `REQUIRES: x86_64`: the host is x86-64 (the kernels' AVX2 copies,
# test/CodeGen/vector-math.test).
if os.uname().machine in ("x86_64", "amd64"):
    config.available_features.add("x86_64")

# Kernels tofu-run compiles are kept in the build tree, once per graph for
# every test (tests that look at compiling pass their own --kernel-cache).
config.environment["TOFU_KERNEL_CACHE"] = os.path.join(
    config.tofu_obj_root, "test", "kernel-cache")

config.substitutions.append(("%tofu_src", config.tofu_src_root))
config.substitutions.append(("%tofu_obj", config.tofu_obj_root))
config.substitutions.append(("%specs", os.path.join(config.tofu_src_root, "specs")))
# %python is the configured Python (/usr/bin/python3, which has torch), not
# the interpreter running lit: use_default_substitutions() defines its own
# %python as lit's sys.executable, and lit applies the first match, so ours
# goes first (test/Suite/python-substitution.test).
config.substitutions.insert(0, ("%python", config.python_executable))
# For the test of the suite's own configuration: lit.py, and the configured
# Python under a name no other substitution shadows.
config.substitutions.append(
    ("%{lit}", os.path.join(os.path.dirname(os.path.dirname(lit.__file__)),
                            "lit.py")))
config.substitutions.append(("%{configured-python}", config.python_executable))
config.substitutions.append(
    ("%exit-status", config.python_executable + " " +
     os.path.join(config.tofu_src_root, "test", "Utils", "print-exit-status.py")))
config.substitutions.append(
    ("%npy", config.python_executable + " " +
     os.path.join(config.tofu_src_root, "test", "Utils", "npy.py")))

# `REQUIRES: torch`: the Python that runs the tests has PyTorch (Debian's
# python3-torch) and numpy.
import subprocess  # noqa: E402
if subprocess.call([config.python_executable, "-c", "import torch, numpy"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("torch")

# `REQUIRES: onnx`: tofu-graph was built with the ONNX importer and the
# Python onnx package (to write test models) is importable.
if getattr(config, "tofu_have_onnx", "OFF") == "ON" and subprocess.call(
        [config.python_executable, "-c", "import onnx"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("onnx")

# `REQUIRES: onednn`: tofu-run runs convolutions, batch norms and pooling
# on oneDNN (CMake found it; docs/Runtime.md).
if getattr(config, "tofu_have_dnnl", "OFF") == "ON":
    config.available_features.add("onednn")

# `REQUIRES: mpi`: tofu-run was built with the MPI transport (CMake found
# MPI) and the MPI launcher exists; `%mpirun -np K` runs K ranks on however
# many cores there are. Open MPI refuses to run as root unless told to.
# `mpi-transport`: built with the MPI transport (mpirun or not).
import shutil  # noqa: E402
if getattr(config, "tofu_have_mpi", "OFF") == "ON":
    config.available_features.add("mpi-transport")
    if config.mpiexec and shutil.which(config.mpiexec):
        config.available_features.add("mpi")
        config.substitutions.append(
            ("%mpirun", config.mpiexec + " --oversubscribe"))
        config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

# `REQUIRES: nvcc`: CMake found the CUDA toolkit (cmake/TofuCuda.cmake);
# %nvcc compiles a generated CUDA unit for the configured architectures.
if getattr(config, "tofu_nvcc", ""):
    config.available_features.add("nvcc")
    config.substitutions.append(
        ("%nvcc", config.tofu_nvcc + " " + config.tofu_nvcc_flags))
else:
    lit_config.note("the nvcc tests are UNSUPPORTED: " +
                    getattr(config, "tofu_cuda_reason", "no CUDA toolkit"))

# `cuda-runtime`: tofu-run links the device executor's CUDA implementation
# (TofuRuntimeCUDA); `gpu`: this machine has an NVIDIA device node.
if getattr(config, "tofu_cuda_runtime", "") in ("ON", "1", "TRUE"):
    config.available_features.add("cuda-runtime")
if os.path.exists("/dev/nvidia0"):
    config.available_features.add("gpu")

# `REQUIRES: digits`: examples/digits was built (zlib) and scikit-learn's
# digits.csv.gz (Debian's python3-sklearn) is there; %digits_csv is its path.
if getattr(config, "tofu_digits_csv", ""):
    config.available_features.add("digits")
    config.substitutions.append(("%digits_csv", config.tofu_digits_csv))
