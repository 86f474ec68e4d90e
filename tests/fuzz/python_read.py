"""The fuzz harness's Python reader (tests/fuzz/fuzz_readers.c, kind
python): reads FILE with tilefmm.read and writes its bodies to OUT, one
line "n time" and then "x y z m vx vy vz id" a body, each number exact
(repr), for the harness to hold against its independent reading. A
refusal (any exception) is one "tilefmm.read: ..." line on stderr and
exit status 1.
Usage: python python_read.py FILE OUT"""
import sys

import tilefmm


def main():
    path, out = sys.argv[1], sys.argv[2]
    try:
        b = tilefmm.read(path)
    except Exception as e:  # the library's message names the file
        print(f"tilefmm.read: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write(f"{len(b.masses)} {float(b.time)!r}\n")
        for x, v, m, i in zip(b.positions, b.velocities, b.masses, b.ids):
            nums = (*x, m, *v)
            f.write(" ".join(repr(float(t)) for t in nums) + f" {int(i)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
