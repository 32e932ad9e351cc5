"""The split between fast and slow tests holds (``tests/conftest.py``): a test taking the
real model or the local S3 server is slow whatever its module says, so ``./scripts/test``
(``-m "not slow"``) skips it; a fast test that loads the real model fails, saying so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

INNER = """
import sys

import pytest


def test_stays_light():
    assert "torch" not in sys.modules


def test_takes_the_real_model(real_embedder):
    raise AssertionError("a slow test ran in a fast run")


def test_takes_the_local_s3(s3_env):
    raise AssertionError("a slow test ran in a fast run")


def test_loads_torch():
    sys.modules["torch"] = type(sys)("torch")  # what loading the real model leaves behind


@pytest.mark.slow
def test_slow_and_marked_so():
    raise AssertionError("a slow test ran in a fast run")
"""


def test_a_fast_run_skips_the_slow_tests_and_fails_a_fast_test_that_loads_the_model(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_inner=INNER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join((str(ROOT), str(ROOT / "tests"))))
    quiet = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:faker", "-p", "no:schemathesis")
    fast = pytester.runpytest_subprocess("-m", "not slow", *quiet)
    fast.assert_outcomes(passed=2, errors=1, deselected=3)
    fast.stdout.fnmatch_lines(["ERROR test_inner.py::test_loads_torch - Failed: this test loaded the real*"])
