"""One row per seed: the 46 tests that draw a seed, every one run at the
final test code: on the device (bench/seeds.sh run) and, for those its
copy had not reached in the time limit and the two scripts changed since
(cli_mpi_forces, cli_mpi_restart), here. Reads the logs where they were
unpacked: /tmp/sl2 and /tmp/sl3 (the two calls' seeds_logs.tgz) and
/tmp/complete (the local runs); the logs stay out of the repository.

    python3 table.py > seeds.csv
"""
import glob, os, re
pat = re.compile(r"Test +#\d+: (\S+) \.+\s*(\*\*\*\w+(?: \w+)?|Passed)")
CHANGED = {"cli_mpi_forces", "cli_mpi_restart"}
names = set()
for f in glob.glob("/tmp/sl[23]/seed_*.log"):
    names |= {n for n, _ in pat.findall(open(f, errors="replace").read())}
print("seed,device_commit,machine,tests,passed,skipped_no_gpu,failed,"
      "device_failed_before_test_fix,run_here")
for d, commit, machine in (("/tmp/sl2", "7e874db", "nvidia-h200 (16 cores)"),
                           ("/tmp/sl3", "a1c230d", "nvidia-h200-x2 (32 cores)")):
    for f in sorted(glob.glob(d + "/seed_*.log")):
        seed = re.search(r"seed_(\d+)\.log", f).group(1)
        dev = dict(pat.findall(open(f, errors="replace").read()))
        old = [n for n in sorted(CHANGED) if dev.get(n, "Passed") != "Passed"]
        for n in CHANGED:
            dev.pop(n, None)
        lf = f"/tmp/complete/seed_{seed}.log"
        here = dict(pat.findall(open(lf).read())) if os.path.exists(lf) else {}
        res = {**dev, **here}
        assert set(res) == names, (seed, names - set(res))
        p = sum(r == "Passed" for r in res.values())
        s = sum(r == "***Skipped" for r in res.values())
        bad = [n for n, r in res.items() if r not in ("Passed", "***Skipped")]
        print(f"{seed},{commit},{machine},{len(res)},{p},{s},"
              f"{' '.join(bad) or '-'},{' '.join(old) or '-'},"
              f"{' '.join(sorted(here))}")
