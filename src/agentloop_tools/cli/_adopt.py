"""``agentloop-tools adopt``: date a cassette recorded by another project or client.

Writes provenance v2 with ``source: adopted`` at the top of the cassette, leaving the
interactions byte for byte; no key is needed. Exit 0 when written, 2 when refused
(not a YAML vcrpy cassette, already dated without ``--force``, a bad date or note):
nothing is written then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentloop_tools._errors import InputError
from agentloop_tools._visible import visible
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_USAGE, stderr

if TYPE_CHECKING:
    import argparse


def adopt(args: argparse.Namespace) -> int:
    from agentloop_tools.cassettes._adopt import adopt as write
    from agentloop_tools.cassettes._adopt import check_note, parse_date

    path = str(args.cassette)
    try:
        when = parse_date(args.recorded_at)
        note = check_note(args.note) if args.note else None
        count = write(path, when, note, force=args.force)
    except InputError as error:
        stderr(f"agentloop-tools adopt: {path}: {error}. Nothing was written.")
        return EXIT_USAGE
    print(
        visible(
            f"agentloop-tools adopt: {path}: provenance written (source: adopted, recorded_at "
            f"{when:%Y-%m-%dT%H:%M:%SZ}); its {count} interaction(s) are unchanged."
        )
    )
    print(
        "If its requests were built by another client (system as a list, tool_choice, "
        'include), replay it with @pytest.mark.vcr(match_on=("method", "uri")) on its test.'
    )
    return EXIT_CLEAN
