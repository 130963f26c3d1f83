"""``agentloop-tools``: audit recorded cassettes and saved transcripts outside a test run.

    agentloop-tools audit PATH... [--allow D[,D...] | --block D[,D...] | --policy FILE]
    agentloop-tools evidence PATH...
    agentloop-tools diff OLD NEW [--fail-on domains|evidence|any|never] [--allow ... | ...]
    agentloop-tools scan PATH...
    agentloop-tools explain URL_OR_TEXT... [--allow ... | --block ... | --policy FILE]
    agentloop-tools adopt CASSETTE --recorded-at DATE [--note TEXT] [--force]
    agentloop-tools --version

Options and paths mix in any order; ``--allow``/``--block`` take one value each, a
comma-separated list, and can be repeated. Exit codes: 0 clean, 1 violations (audit,
even when some input could not be read) or secrets (scan), 2 bad usage, input that could
not be read (everything else is still read and reported) or no file to read at all.
Never a traceback: an unexpected error is reported as one line and exit 2. Recorded text
(URLs, file names, answers) is printed with its control characters as visible escapes
(``\x1b``), never raw; ``--format json`` keeps it exact.
"""

from agentloop_tools.cli._main import main

# The rooms, by job: _main (parse, dispatch, the last line of defence), _arguments (the
# parser), _inputs (files, the policy, problems), _output (formats, escapes, stderr), and
# one per command: _audit (with _baseline, _sarif, _spool, and _jobs running --jobs over
# agentloop_tools._logs), _evidence (with _evidence_view, _provenance_view), _diff (with
# _recorded and the core's testing._drift), _scan, _explanations, _adopt.
__all__ = ["main"]
