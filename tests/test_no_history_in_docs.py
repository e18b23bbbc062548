"""The project speaks of itself as it is: no session counts and no issue numbers in any tracked file.

In:  the repository's tracked files (`git grep`, the same search a reader would run), or any other tree.
Out: ``path:line: text`` for each mention; the test asserts there are none. History lives in git.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# a session's ordinal, or an issue's number: how a diary names its days and its tickets.
HISTORY = r"[0-9]+(st|nd|rd|th) session|[Ii]ssue [0-9]+"
# the forms, written apart so that this file holds none of them itself
SESSION, ISSUE = " session", "ssue "


def history_mentions(root: Path) -> list[str]:
    """Each line of a tracked text file under ``root`` that matches `HISTORY`, as ``path:line: text``."""
    done = subprocess.run(["git", "grep", "-nIE", HISTORY], cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: nothing found
        raise RuntimeError(f"git grep failed ({done.returncode}): {done.stderr.strip()}")
    return [line[:200] for line in done.stdout.splitlines()]


def test_no_session_counts_or_issue_numbers_anywhere():
    found = history_mentions(ROOT)
    assert found == [], f"{len(found)} lines name a session or an issue; say what is, not when:\n" + "\n".join(found)


def test_the_search_finds_each_form_in_tracked_files_only(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "README.md").write_text(f"Measured in the 23rd{SESSION}.\nNothing here.\n")
    (tmp_path / "code.py").write_text(f"x = 1  # I{ISSUE}31's backend\ny = 2  # the 1st{SESSION}s' count\n")
    (tmp_path / "clean.md").write_text("issue-free text; a session of Spark; issues 3\n")
    (tmp_path / "untracked.md").write_text(f"the 2nd{SESSION}\n")
    git("add", "README.md", "code.py", "clean.md")
    assert history_mentions(tmp_path) == [f"README.md:1:Measured in the 23rd{SESSION}.",
                                          f"code.py:1:x = 1  # I{ISSUE}31's backend",
                                          f"code.py:2:y = 2  # the 1st{SESSION}s' count"]
    assert re.search(HISTORY, f"i{ISSUE}9") and not re.search(HISTORY, "issues 9")
