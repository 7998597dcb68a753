"""The agent's stats for the bench harnesses: asked for with stats=FILE among the agent's options,
read back (JSON) through the line the agent says when a run ends — with the integration tests'
reader (tests/integration/run.py), so that both read them one way. Values stay as the agent wrote
them (strings). An agent built before stats= existed is given no stats= (it would refuse the
option): its runs have no stats ({})."""
import functools
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import run as it  # noqa: E402  (the integration tests' parsers)


@functools.lru_cache(maxsize=None)
def takes_stats(agent, java="java"):
    """Whether the agent knows stats= (its help lists it)."""
    p = subprocess.run([java, f"-agentpath:{agent}=help", "-version"], capture_output=True, text=True,
                       timeout=120)
    return "\n  stats=" in p.stdout


def option(agent, path, java="java"):
    """",stats=path" for an agent that takes it, else ""."""
    return f",stats={path}" if takes_stats(agent, java) else ""


def each(text):
    """The stats of every run that ended in text (the agent's stderr), in order; {} for a stats
    file no longer there."""
    return [it.read_stats(p) if os.path.exists(p) else {} for p in it.stats_named(text)]


def last(text):
    """The stats of the last run that ended in text, {} when none said where its stats went."""
    runs = each(text)
    return runs[-1] if runs else {}
