"""The example runs, as an outside script would: from another directory,
with the installed package, writing its PNG."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "merger.py"


def test_the_merger_example_writes_its_plot(tmp_path):
    image = pytest.importorskip("matplotlib.image")
    r = subprocess.run([sys.executable, str(EXAMPLE), "--n", "300", "--t-end", "1",
                        "--frames", "2", "--out", "plot.png"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "300 bodies" in r.stdout and "wrote plot.png" in r.stdout
    png = tmp_path / "plot.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = image.imread(png)
    assert pixels.shape[0] == 320 and pixels.shape[1] == 3 * 320
    assert pixels[..., :3].std() > 0.01  # something was drawn
