"""What the installed llama-cpp-python was compiled for, and a check that it runs on any x86-64 CPU with AVX2.

    python -m gravity_engine.llm.build_info [--log .venv/local-llm-build.log]

``make local-llm`` runs this after the build and appends its report to the build log. A native build
(pip's default) on a CPU with AMX segfaults at its first decode (``ggml_backend_amx_mul_mat``), and one
built on an AVX-512 machine dies with SIGILL on a CPU without it; so the libraries must hold no AVX-512
(``zmm`` registers) and no AMX tile instructions. Exit status 1 when they do.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# AMX tile instructions (Intel SDM): configuration, loads/stores and the dot products.
AMX_MNEMONICS = ("ldtilecfg", "sttilecfg", "tilerelease", "tilezero", "tileloadd", "tileloaddt1", "tilestored",
                 "tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps")
_AMX = re.compile(r"\t(" + "|".join(AMX_MNEMONICS) + r")\b")
_ZMM = re.compile(r"%zmm\d+")
# Lines of the cmake configure step that say which instruction sets ggml was compiled for.
_CONFIGURE = re.compile(r"^(CMAKE_ARGS=.*|\s*-- (GGML_SYSTEM_ARCH|x86 detected|Adding CPU backend variant).*)$")


@dataclass
class LibraryScan:
    path: Path
    instructions: int
    zmm: int  # instructions using an AVX-512 register
    amx: int  # AMX tile instructions

    @property
    def portable(self) -> bool:
        return self.zmm == 0 and self.amx == 0


def llama_libraries() -> list[Path]:
    """The shared libraries of the installed llama_cpp package (``libllama``, ``libggml*``, ``libmtmd``), without
    importing it (importing loads them, and a bad build may crash the importer)."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    # The wheel holds each library three times (libx.so, .so.0, .so.0.25.3) as copies: scan one of each.
    libs: dict[str, Path] = {}
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).rglob("*.so*"), key=lambda p: len(p.name)):
            if path.is_file() and path.name.startswith(("libllama", "libggml", "libmtmd")):
                libs.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return sorted(libs.values())


def scan_library(path: Path) -> LibraryScan:
    """Disassemble ``path`` (objdump) and count AVX-512 and AMX instructions."""
    objdump = shutil.which("objdump")
    if objdump is None:
        raise RuntimeError("objdump is not installed (binutils): cannot check the built library")
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True,
                         check=True).stdout
    instructions = zmm = amx = 0
    for line in out.splitlines():
        if "\t" not in line:
            continue
        instructions += 1
        zmm += bool(_ZMM.search(line))
        amx += bool(_AMX.search(line))
    return LibraryScan(path, instructions, zmm, amx)


def configure_lines(log_text: str) -> list[str]:
    """The lines of a build log that say how ggml was configured: the CMAKE_ARGS given (``make local-llm`` writes
    them first) and cmake's own lines naming the target instruction sets."""
    return list(dict.fromkeys(line.strip() for line in log_text.splitlines() if _CONFIGURE.match(line)))


def report(log: Path | None = None) -> tuple[bool, list[str]]:
    """(portable, lines to print): how llama.cpp was configured and what its libraries contain."""
    lines: list[str] = []
    if log is not None and log.is_file():
        lines += [f"configure: {line}" for line in configure_lines(log.read_text(errors="replace"))]
    libs = llama_libraries()
    if not libs:
        return False, lines + ["llama_cpp is not installed (no libllama / libggml found)"]
    portable = True
    for lib in libs:
        scan = scan_library(lib)
        portable &= scan.portable
        verdict = "portable" if scan.portable else "NOT PORTABLE (needs a CPU with AVX-512/AMX)"
        lines.append(f"{lib.name}: {scan.instructions:,} instructions, {scan.zmm} AVX-512, {scan.amx} AMX: {verdict}")
    lines.append("llama.cpp built for any x86-64 CPU with AVX2" if portable else
                 "llama.cpp was built for this CPU only: rebuild with `make local-llm` (GGML_NATIVE=OFF)")
    return portable, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="the pip build log, for the cmake configure lines")
    args = parser.parse_args(argv)
    portable, lines = report(args.log)
    print("\n".join(lines))
    return 0 if portable else 1


if __name__ == "__main__":
    sys.exit(main())
