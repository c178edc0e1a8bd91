# SPDX-License-Identifier: GPL-2.0
"""The MulTFRC equation's own C test (tools/testing/multfrc): the module's
source built in user space against a double-precision reference."""

import os
import re
import subprocess
import unittest

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
DIR = os.path.join(TOP, "tools", "testing", "multfrc")


class Equation(unittest.TestCase):
    def test_equation_against_reference(self):
        subprocess.run(["make", "-s", "-C", DIR, "equation_test",
                        "CFLAGS=-O2 -g -Wall -Wextra -Werror"], check=True)
        r = subprocess.run([os.path.join(DIR, "equation_test")],
                           capture_output=True, text=True)
        results = re.findall(r"^(not )?ok \d+ (.*)$", r.stdout, re.M)
        plan = re.search(r"^1\.\.(\d+)$", r.stdout, re.M)
        self.assertTrue(plan, r.stdout)
        self.assertEqual(len(results), int(plan.group(1)), r.stdout)
        failed = [desc for neg, desc in results if neg]
        self.assertEqual(failed, [], r.stdout)
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()
