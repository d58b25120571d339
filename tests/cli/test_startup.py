"""The command line starts light: building its parser (which imports every verb) loads
neither numpy nor the runtime (they are for `cutec run`, 40-50 ms) nor xml.sax (which
pulls in urllib, 30 ms), so `cutec compile` does not pay for them."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import cutec.cli
cutec.cli.build_parser()
heavy = [m for m in ("numpy", "cutec.runtime", "xml.sax", "urllib.request") if m in sys.modules]
print(",".join(heavy))
"""


def test_building_the_parser_loads_no_heavy_module() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"imported at start: {out.stdout.strip()}"
