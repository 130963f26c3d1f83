"""Budgets: the ``agent_budget`` markers and ``agentloop_budget`` ini key, and the
recording spend cap ``--agentloop-record-budget``.

A test's budget is read before any test runs (a bad limit is a usage error) and
checked by the gate after the body, on the evidence record: on replay that is the
recorded usage, so a budget holds in CI without a key. The spend cap sums what the
run records in one counter file under a lock, shared by xdist's workers; each model
request that would be recorded asks it first.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import pytest

from agentloop_tools._budget_limits import BUDGET_COUNTERS, check_limits, parse_limits
from agentloop_tools._docs import docs_url
from agentloop_tools._plugin.failures import fail
from agentloop_tools._plugin.markers import Placed, markers_are_ours, on_path
from agentloop_tools._plugin.scope import (
    BUDGET_INI,
    BUDGET_MARKER_NAME,
    RECORD_BUDGET_OPTION,
    ini_keys_written,
)

if TYPE_CHECKING:
    from agentloop_tools.testing import AgentloopEvidence

_EXAMPLE = "e.g. @pytest.mark.agent_budget(searches=5, output_tokens=2000)"


class Budget(NamedTuple):
    """A test's limits by counter, and where each was written."""

    limits: dict[str, int]
    origins: dict[str, str]

    def origin(self) -> str:
        """Where the limits were written, each place with the limits it gave."""
        places: dict[str, list[str]] = {}
        for name, value in self.limits.items():
            places.setdefault(self.origins[name], []).append(f"{name}={value}")
        return "; ".join(f"{where}: {', '.join(given)}" for where, given in places.items())

    def shown(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.limits.items())

    def then(self, farther: Budget | None) -> Budget:
        """This budget over a farther one: its limits replace the farther's they name."""
        if farther is None:
            return self
        limits = {**farther.limits, **self.limits}
        origins = {**farther.origins, **self.origins}
        order = [name for name in BUDGET_COUNTERS if name in limits]
        return Budget({n: limits[n] for n in order}, {n: origins[n] for n in order})


BUDGET = pytest.StashKey[Budget]()  # the test's agent_budget markers, read
SPENT = pytest.StashKey[dict[str, Any]]()  # what the gate found, for the report
CAPPED = pytest.StashKey[str]()  # the spend cap refused one of the test's requests


def default_budget(config: pytest.Config) -> Budget | None:
    """The ``agentloop_budget`` ini key, checked now: a bad one stops the run."""
    text = str(config.getini(BUDGET_INI) or "").strip()
    if not text:
        if BUDGET_INI in ini_keys_written(config):
            raise pytest.UsageError(empty_budget_key(BUDGET_INI))
        return None
    where = f"ini key {BUDGET_INI}"
    try:
        limits = parse_limits(text, where)
    except (TypeError, ValueError) as error:
        raise pytest.UsageError(bad_budget(str(error))) from None
    return Budget(limits, dict.fromkeys(limits, where))


def read_budget(item: pytest.Item) -> Budget:
    """Every ``agent_budget`` marker on the test's path, checked; the closest one's
    limit wins for each counter it names."""
    budget: Budget | None = None
    # Farthest first: each closer one replaces.
    for placed in reversed(on_path(item, BUDGET_MARKER_NAME, stacked_budget)):
        budget = _read_one(placed).then(budget)
    assert budget is not None  # read only for a test that carries the marker
    return budget


def _read_one(placed: Placed) -> Budget:
    where, mark = placed.where, placed.mark
    if mark.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only, one limit per counter ({_EXAMPLE})."
        )
    try:
        limits = check_limits(mark.kwargs, where)
    except (TypeError, ValueError) as error:
        raise pytest.UsageError(bad_budget(str(error))) from None
    return Budget(limits, dict.fromkeys(limits, where))


def check_budget(
    item: pytest.Item,
    budget: Budget | None,
    evidence: AgentloopEvidence | None,
    *,
    known_only: bool = False,
) -> None:
    """Fail the test when the spend cap refused its request, or it spent over its budget.

    ``known_only``: the body failed, so an unfinished conversation's unknown usage is
    its failure's doing; only a known overspend is added to it.
    """
    __tracebackhide__ = True
    capped = item.stash.get(CAPPED, None)
    if capped is not None:
        fail(capped, "budget")  # the refusal may have been caught in the test: it fails here
    if budget is None or evidence is None:
        return
    from agentloop_tools.testing._budget import budget_message, overspent, spent

    summary = evidence.summary()
    found = overspent(summary, budget.limits)
    if known_only:
        found = [over for over in found if over.total is not None]
    totals: dict[str, int | None] = {}
    for name in budget.limits:
        shares = [spent(c, name) for c in summary.conversations]
        totals[name] = None if any(s is None for s in shares) else sum(s or 0 for s in shares)
    for over in found:
        totals[over.counter] = over.total
    item.stash[SPENT] = {
        "limits": dict(budget.limits),
        "from": budget.origin(),
        "spent": totals,
        "over": [over.counter for over in found],
    }
    if found:
        fail(budget_message(item.nodeid, summary, found, budget.origin()), "budget")


# The recording spend cap -------------------------------------------------------------

CAP_COUNTERS = ("tokens", "searches", "model_requests")
_WORKER_KEY = "agentloop_tools_spend_file"  # the counter file's path, given to workers
_TEMPORARY = "agentloop-tools-spend-"  # the folder's prefix when pytest's cache is off


def read_cap(config: pytest.Config) -> dict[str, int] | None:
    """``--agentloop-record-budget``, checked now: a bad value stops the run."""
    text = config.getoption(RECORD_BUDGET_OPTION.dest)
    if text is None:
        return None
    flag = RECORD_BUDGET_OPTION.flag
    limits: dict[str, int] = {}
    for entry in str(text).split(","):
        name, equals, value = (part.strip() for part in entry.partition("="))
        if not equals or name not in CAP_COUNTERS or not (value.isascii() and value.isdigit()):
            raise pytest.UsageError(bad_record_budget(flag, str(text), entry.strip()))
        if name in limits:
            raise pytest.UsageError(bad_record_budget(flag, str(text), entry.strip()))
        limits[name] = int(value)
    return limits


class SpendCounter:
    """The run's recorded spend, in one JSON file under a lock (xdist workers share it).

    The lock is ``fcntl.flock`` (``msvcrt.locking`` on Windows): advisory, and only as
    good as the file system's locks (a network share may not honour them).
    """

    def __init__(self, path: Path, limits: Mapping[str, int], *, owner: bool) -> None:
        self.path = path
        self.limits = dict(limits)
        self.owner = owner  # the process that made the file removes it

    @classmethod
    def start(cls, config: pytest.Config, limits: Mapping[str, int]) -> SpendCounter:
        worker = getattr(config, "workerinput", None)
        given = worker.get(_WORKER_KEY) if isinstance(worker, dict) else None
        if given:
            return cls(Path(given), limits, owner=False)
        import uuid

        folder = _cache_folder(config)
        path = folder / f"record-spend-{uuid.uuid4().hex}.json"
        path.write_text(json.dumps(dict.fromkeys(CAP_COUNTERS, 0)), encoding="utf-8")
        counter = cls(path, limits, owner=True)
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(_GiveWorkers(path), "agentloop-tools-spend")
        return counter

    def spent(self) -> dict[str, int]:
        with _locked(self.path) as file:
            return _read(file)

    def reached(self) -> dict[str, int]:
        """Every capped counter the run's recordings have reached, with what was spent."""
        spent = self.spent()
        return {n: spent.get(n, 0) for n, cap in self.limits.items() if spent.get(n, 0) >= cap}

    def add(self, spend: Mapping[str, int]) -> None:
        if not any(spend.values()):
            return
        with _locked(self.path) as file:
            totals = _read(file)
            for name, value in spend.items():
                totals[name] = totals.get(name, 0) + value
            file.seek(0)
            file.truncate()
            file.write(json.dumps(totals))
            file.flush()

    def shown(self) -> str:
        return ",".join(f"{name}={value}" for name, value in self.limits.items())

    def close(self) -> None:
        if self.owner:
            with contextlib.suppress(OSError):
                self.path.unlink()
            if self.path.parent.name.startswith(_TEMPORARY):
                with contextlib.suppress(OSError):
                    self.path.parent.rmdir()


class _GiveWorkers:
    """xdist's controller tells each worker where the run's counter file is."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def pytest_configure_node(self, node: Any) -> None:
        """xdist's hook, before a worker starts: https://pytest-xdist.readthedocs.io/en/stable/how-to.html"""
        node.workerinput[_WORKER_KEY] = str(self.path)


def _cache_folder(config: pytest.Config) -> Path:
    """pytest's cache folder (``.pytest_cache/d/agentloop-tools``); a temporary folder
    when the cache plugin is off (``-p no:cacheprovider``)."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        with contextlib.suppress(OSError):
            return Path(cache.mkdir("agentloop-tools"))
    import tempfile

    return Path(tempfile.mkdtemp(prefix=_TEMPORARY))


def _read(file: IO[str]) -> dict[str, int]:
    file.seek(0)
    try:
        data = json.loads(file.read() or "{}")
    except ValueError:
        data = {}
    found = data if isinstance(data, dict) else {}
    return {
        name: value
        for name, value in found.items()
        if isinstance(name, str) and isinstance(value, int) and not isinstance(value, bool)
    }


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[IO[str]]:
    with open(path, "r+", encoding="utf-8") as file:
        if sys.platform == "win32":
            import msvcrt

            file.seek(0)
            msvcrt.locking(file.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield file
            finally:
                file.seek(0)
                msvcrt.locking(file.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
            try:
                yield file
            finally:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def spend_of(recorded: Any, response: Any) -> dict[str, int]:
    """What one recorded exchange cost: a model request (its tokens, its hosted
    searches), or a search API's search (a client-side ``web_search``)."""
    from agentloop_tools.cassettes._reading._usage import model_api, read_exchange

    api = model_api(str(recorded.uri), str(recorded.method))
    if api is not None:
        exchange = read_exchange(api, response)
        tokens = (exchange.input_tokens or 0) + (exchange.output_tokens or 0)
        return {"model_requests": 1, "tokens": tokens, "searches": exchange.searches or 0}
    from agentloop_tools._providers import search_api_for_host

    if search_api_for_host(str(recorded.host or "")) and str(recorded.path).endswith("/search"):
        return {"searches": 1}
    return {}


def cap_recording(request: pytest.FixtureRequest, counter: SpendCounter | None) -> None:
    """Each model request this test would record asks the run's spend first; each
    exchange recorded adds to it."""
    cassette = request.getfixturevalue("vcr")
    if cassette is None or counter is None or cassette.write_protected:
        return
    from agentloop_tools.cassettes._reading._usage import model_api

    item = request.node
    can_play, append = cassette.can_play_response_for, cassette.append

    def can_play_or_refuse(live_request: Any) -> bool:
        if can_play(live_request):
            return True
        if model_api(str(live_request.uri), str(live_request.method)) is not None:
            reached = counter.reached()
            if reached:
                message = record_budget_spent(
                    item.nodeid, RECORD_BUDGET_OPTION.flag, counter.shown(), reached
                )
                item.stash[CAPPED] = message
                fail(message, "budget")
        return False

    def append_and_count(live_request: Any, response: Any) -> None:
        before = len(cassette.data)
        append(live_request, response)
        if len(cassette.data) > before:
            counter.add(spend_of(*cassette.data[-1]))

    cassette.can_play_response_for = can_play_or_refuse
    cassette.append = append_and_count


def budgets(config: pytest.Config) -> tuple[Budget | None, SpendCounter | None]:
    """The project's default budget and the recording spend cap, checked now."""
    default = default_budget(config)
    cap = read_cap(config)
    return default, SpendCounter.start(config, cap) if cap is not None else None


def read_test_budget(item: pytest.Item, default: Budget | None, marked: bool) -> str | None:
    """The test's budget markers, read (the problem, if any); a test with a budget gets
    the evidence fixture, which the budget is read from. ``marked``: it carries one."""
    if marked and BUDGET not in item.stash:
        try:
            if markers_are_ours(item, BUDGET_MARKER_NAME):
                item.stash[BUDGET] = read_budget(item)
        except pytest.UsageError as error:
            return str(error)
    budgeted = BUDGET in item.stash or default is not None
    if (
        budgeted
        and isinstance(item, pytest.Function)
        and "agentloop_evidence" not in item.fixturenames
    ):
        item.fixturenames.append("agentloop_evidence")
    return None


def budget_for(default: Budget | None, item: pytest.Item) -> Budget | None:
    """The test's budget: its markers' limits over the project default's."""
    marker = item.stash.get(BUDGET, None)
    if marker is None:
        return default
    return marker.then(default)


# Texts ---------------------------------------------------------------------------------


def budget_marker_near_miss(nodeid: str, written: str) -> str:
    return (
        f"@pytest.mark.{written} on {nodeid} is not a registered marker, and it is one "
        "typo away from @pytest.mark.agent_budget: as written, the test would run with no "
        "budget and pass whatever its agents spent. Did you mean @pytest.mark.agent_budget? "
        "(A marker of your own with this name must be registered in the ini file's "
        f"markers.) See {docs_url('budgets')}."
    )


def stacked_budget(nodeid: str, where: str) -> str:
    return (
        f"@pytest.mark.agent_budget on {nodeid}: {where} carries more than one agent_budget "
        "marker, and which limit wins between them is not the plugin's guess to make. "
        "Keep one marker, with every limit in it."
    )


def bad_budget(problem: str) -> str:
    return f"{problem} See {docs_url('budgets')}."


def empty_budget_key(key: str) -> str:
    return (
        f"ini key {key} is written with no limit, so it would limit nothing: give limits "
        f"({key} = searches=5, output_tokens=2000), or remove the key. "
        f"See {docs_url('budgets')}."
    )


def bad_record_budget(flag: str, given: str, entry: str) -> str:
    return (
        f"{flag}={given}: {entry!r} is not COUNTER=N with a known counter, or names one "
        "twice; write the caps comma-separated, each a whole number, from tokens (input + "
        f"output), searches and model_requests: {flag} tokens=200000,searches=50. "
        f"See {docs_url('budgets')}."
    )


def record_budget_spent(nodeid: str, flag: str, caps: str, reached: Mapping[str, int]) -> str:
    spent = ", ".join(f"{name} {value}" for name, value in reached.items())
    return (
        f"RECORDING BUDGET SPENT {nodeid}: this run's recordings reached the spend cap "
        f"{flag} {caps} (spent so far: {spent}), so the model request this test would "
        "have recorded next was refused before it was sent. What was recorded stays: its "
        "cassette keeps the interactions recorded before, and a replay will miss the "
        "refused request. Re-record this test in a run with a higher cap, or none. "
        f"See {docs_url('budgets')}."
    )
