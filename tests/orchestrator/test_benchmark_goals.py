"""The benchmark's verdict on each line of the performance goal, from one run's medians."""

from __future__ import annotations

from benchmarks._goals import Tables, verdicts


def figures(**values: float) -> dict[str, float]:
    return dict(values)


RUN: Tables = {
    "cpu": {
        "sdk-raw": figures(cpu_ms_per_turn=2.312, followup_cache_share=0.935),
        "runtime-sqlite": figures(cpu_ms_per_turn=1.647, followup_cache_share=0.982),
        "corral-fanout-p2": figures(cpu_ms_per_turn=2.4, followup_cache_share=0.965),
    },
    "scale": {
        "sdk-raw": figures(efficiency=0.258, wall_s=15.533),
        "runtime-sqlite": figures(efficiency=0.488, wall_s=8.197),
        "corral-fanout-p2": figures(efficiency=0.506, wall_s=7.903),
    },
    "rss": {"runtime-sqlite": figures(rss_peak_mb=103.7)},
    "clean": {
        "runtime-sqlite": figures(efficiency=0.423, lost_agents=0),
        "corral-fanout-p2": figures(efficiency=0.288, lost_agents=0),
    },
    "faults-short": {
        "runtime-sqlite": figures(efficiency=0.359, lost_agents=0),
        "corral-fanout-p2": figures(efficiency=0.282, lost_agents=1),
    },
}


def judged(tables: Tables) -> dict[tuple[str, str], bool]:
    return {(v.line, v.mode): v.met for v in verdicts(tables)}


def test_each_line_is_judged_for_each_mode_it_applies_to() -> None:
    assert judged(RUN) == {
        ("cpu", "runtime-sqlite"): True,
        ("scale", "runtime-sqlite"): False,
        ("scale", "corral-fanout-p2"): True,
        ("faults-short", "runtime-sqlite"): True,
        ("faults-short", "corral-fanout-p2"): False,  # an agent was lost
        ("cache", "runtime-sqlite"): True,
        ("cache", "corral-fanout-p2"): False,
        ("rss", "runtime-sqlite"): True,
    }


def test_the_cpu_line_needs_the_bare_loop_of_the_same_run_and_must_beat_it() -> None:
    alone = figures(cpu_ms_per_turn=1.0, followup_cache_share=0.98)
    without_bare = {"cpu": {"runtime-sqlite": alone}}
    assert ("cpu", "runtime-sqlite") not in judged(without_bare)
    slower = {
        "cpu": {
            "sdk-raw": figures(cpu_ms_per_turn=1.479, followup_cache_share=0.935),
            "runtime-sqlite": figures(cpu_ms_per_turn=1.488, followup_cache_share=0.982),
        }
    }
    assert judged(slower)[("cpu", "runtime-sqlite")] is False


def test_a_mode_run_from_an_older_checkout_is_not_judged() -> None:
    before = {"rss": {"runtime-sqlite@before": figures(rss_peak_mb=200.0)}}
    assert judged(before) == {}
