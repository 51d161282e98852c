"""The installed package: mha_lab.__version__ is the project's version (the file VERSION), and a
copy installed by `pip install .` (scripts/test.sh runs this suite against one, from another
folder) carries the element's scripts in mha_lab/web/, so show() needs nothing else."""

import os
import unittest

import mha_lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEB = os.path.join(os.path.dirname(os.path.abspath(mha_lab.__file__)), "web")


class Version(unittest.TestCase):
    def test_version_is_the_version_file(self):
        with open(os.path.join(ROOT, "VERSION"), encoding="utf-8") as f:
            self.assertEqual(mha_lab.__version__, f.read().strip())


@unittest.skipUnless(os.path.isdir(WEB), "mha_lab is not an installed copy (no mha_lab/web/)")
class InstalledCopy(unittest.TestCase):
    def test_web_holds_the_built_scripts(self):
        for name in ("mha-attention.js", "mha_wasm_core.js"):
            with open(os.path.join(WEB, name), encoding="utf-8") as f:
                installed = f.read()
            with open(os.path.join(ROOT, "dist", name), encoding="utf-8") as f:
                self.assertEqual(installed, f.read(), name)

    def test_show_reads_the_scripts_from_the_package_alone(self):
        # Not the repository's dist/: no build-tree pointer in the package, no MHA_LAB_DIST.
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(WEB), "_build_info.py")))
        saved = os.environ.pop("MHA_LAB_DIST", None)
        try:
            self.assertEqual(mha_lab.view._asset_dirs(), [WEB])
            view = mha_lab.show_experiment(text="Heads look at different things")
            page = view._repr_html_()
        finally:
            if saved is not None:
                os.environ["MHA_LAB_DIST"] = saved
        with open(os.path.join(WEB, "mha_wasm_core.js"), encoding="utf-8") as f:
            self.assertIn(f.read(), page)
        self.assertIn("Heads → at: 0.424", page)
