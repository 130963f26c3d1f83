"""Refuse to write a cassette that still holds a credential, whatever the serializer.

``guard_recording(vcr, secrets)`` wraps the persister of a vcrpy ``VCR``: every
cassette it saves is checked first, on its decoded strings, and one that holds a
credential is not written at all. The refusal does not raise inside vcrpy (an
exception there leaves vcrpy's patches installed until garbage collection, so the
next test would record only part of its traffic); it is kept on the persister, and
the plugin fails the test after teardown with one short message that never shows
the value (``refusal_of``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentloop_tools._docs import docs_url
from agentloop_tools._errors import CassetteSecretError, RecordingRefused, Undecodable
from agentloop_tools._secrets import Detector
from agentloop_tools.cassettes._hygiene._leaks import Leak, cassette_leaks

_SHOWN = 10


def check_cassette(data: dict[str, Any], detector: Detector) -> list[Leak]:
    """The credentials a serialisable cassette holds; undecodable bodies count as leaks."""
    try:
        return cassette_leaks(data, detector)
    except Undecodable as error:
        return [Leak(str(error).split(":", 1)[0] or "a body", "content that cannot be checked",
                     str(error).split(": ", 1)[-1])]  # fmt: skip


def refusal_message(path: str | None, leaks: Sequence[Leak]) -> str:
    """What was refused, what was found (masked), and how to fix it, in a few lines."""
    where = f"the cassette {path}" if path else "a cassette"
    lines = [
        f"agentloop-tools: refused to write {where}: after scrubbing it still holds "
        f"{len(leaks)} credential(s):",
        *(f"  - {leak}" for leak in leaks[:_SHOWN]),
        *([f"  ... and {len(leaks) - _SHOWN} more"] if len(leaks) > _SHOWN else []),
        "Nothing was written" + (" (the file on disk is unchanged)." if path else "."),
    ]
    sides = {leak.side for leak in leaks}
    if "request" in sides:
        lines.append(
            "From the request: the test sent it (in a prompt, a tool argument, a URL or a "
            "header). Keep credentials out of what the agent sends, or replace it in a "
            "before_record_request hook in vcr_config."
        )
    if "response" in sides:
        lines.append(
            "From the response: the server sent it back (the model repeated it, or an API "
            "echoed it). Keep credentials out of what the model can read, or replace it in a "
            "before_record_response hook in vcr_config."
        )
    if any("cannot be checked" in leak.kind for leak in leaks):
        lines.append(
            "A body that cannot be decoded cannot be checked: record it decompressed "
            "(decode_compressed_response) or as text."
        )
    lines.append(
        "If the value is not a secret, use one that does not look like a key. "
        f"Rotate any real key that was printed or committed. See {docs_url('secrets')}."
    )
    return "\n".join(lines)


class _CheckedSerializer:
    """Any vcrpy serializer, with the cassette checked before and after serialising.

    With ``provenance`` (the recording's record mode), the cassette says where and when
    it came from; unless the file at ``path`` already holds these very interactions,
    which are then written back as they were, byte for byte, provenance and all.
    """

    def __init__(
        self,
        serializer: Any,
        detector: Detector,
        *,
        path: Path | None = None,
        provenance: str | None = None,
        before: str | None = None,
        recording: Any = None,
    ) -> None:
        self._serializer = serializer
        self._detector = detector
        self._path = path
        self._provenance = provenance
        self._before = before
        self._recording = recording
        # (record replaced, record written) of this test, told to the recording once the
        # cassette is written: the plugin shows their drift.
        self._replaced: tuple[Any, Any] | None = None

    def serialize(self, data: dict[str, Any]) -> str:
        if self._provenance is not None:
            data = self._with_provenance(data)
        leaks = check_cassette(data, self._detector)
        if leaks:
            raise RecordingRefused(leaks)
        try:
            text: str = self._serializer.serialize(data)
        except CassetteSecretError as error:
            leaks = error.leaks or [Leak("the serialized cassette", "a credential", "")]
            raise RecordingRefused(leaks) from None
        found = self._detector.find(text)
        if found:
            raise RecordingRefused(
                [Leak("the serialized cassette", f.kind, f.masked) for f in found]
            )
        if self._replaced is not None and self._recording is not None:
            self._recording.replaced_evidence, self._recording.written_evidence = self._replaced
        return text

    def deserialize(self, text: str) -> Any:
        return self._serializer.deserialize(text)

    def _with_provenance(self, data: dict[str, Any]) -> dict[str, Any]:
        from agentloop_tools.cassettes import _provenance

        previous = self._previous()
        record = _provenance.evidence_of(self._recording)
        stored = previous[2] if previous is not None else None
        if previous is not None:
            text, known, _ = previous
            kept = {_provenance.KEY: known, **data} if known is not None else dict(data)
            if stored is not None:
                kept[_provenance.EVIDENCE_KEY] = stored
            try:
                unchanged = self._serializer.serialize(kept) == text
            except Exception:  # the real serialisation below reports any problem
                unchanged = False
            if unchanged:
                # The same recording: the same bytes, the same age; the evidence block
                # gains this test's record only when it has none yet.
                block = _provenance.evidence_block(stored, record, replace=False)
                if block is not None:
                    kept[_provenance.EVIDENCE_KEY] = block
                return kept
        if record is not None:
            before = _provenance.read_evidence({_provenance.EVIDENCE_KEY: stored}).get(record[0])
            if before is not None:
                self._replaced = (before, record[1])
        found = _provenance.facts(data.get("interactions") or [], self._provenance, self._recording)
        written = {_provenance.KEY: found, **data}
        block = _provenance.evidence_block(stored, record, replace=True)
        if block is not None:
            written[_provenance.EVIDENCE_KEY] = block  # after the interactions
        return written

    def _previous(self) -> tuple[str, Any, Any] | None:
        """The cassette file as it is now, its provenance and its evidence block (None
        for each it has not)."""
        from agentloop_tools.cassettes import _provenance

        text = self._before
        try:
            if text is None:
                if self._path is None or not self._path.is_file():
                    return None
                text = self._path.read_text(encoding="utf-8")
            old = self._serializer.deserialize(text)
        except Exception:  # an unreadable old file is simply replaced
            return None
        if not isinstance(old, dict):
            return text, None, None
        return text, old.get(_provenance.KEY), old.get(_provenance.EVIDENCE_KEY)


class GuardedPersister:
    """A vcrpy persister that checks every cassette before its inner persister writes it.

    Attributes:
        refusal: the message for the last refused cassette, or None.
    """

    def __init__(
        self,
        inner: Any,
        detector: Detector,
        *,
        provenance: str | None = None,
        before: Mapping[str, str] | None = None,
        recording: Any = None,
    ) -> None:
        self.inner = inner
        self.detector = detector
        self.refusal: str | None = None
        # The record mode, when the cassettes are to say where they came from, and the
        # files as they were before the test (pytest-recording's rewrite deletes them).
        self.provenance = provenance
        self.before = dict(before or {})
        # What the plugin learnt of the recording as the test ran (a provenance.Recording).
        self.recording = recording

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        return self.inner.load_cassette(cassette_path, serializer=serializer)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        path = Path(cassette_path)
        checked = _CheckedSerializer(
            serializer,
            self.detector,
            path=path,
            provenance=self.provenance,
            before=self.before.get(str(path.resolve())),
            recording=self.recording,
        )
        try:
            self.inner.save_cassette(cassette_path, cassette_dict, serializer=checked)
        except RecordingRefused as refused:
            # Serialising happens before the file is opened: nothing was written.
            self.refusal = refusal_message(str(Path(cassette_path)), refused.leaks)


def guard_recording(
    vcr: Any,
    secrets: Mapping[str, str],
    *,
    provenance: str | None = None,
    before: Mapping[str, str] | None = None,
    recording: Any = None,
) -> GuardedPersister:
    """Check every cassette this ``vcr.VCR`` writes, whatever its serializer.

    ``provenance``: the record mode, to write where and when each cassette came from;
    ``before``: cassette texts by resolved path, as they were before the test;
    ``recording``: what the test's run adds to the provenance (``_provenance.Recording``).
    """
    persister = GuardedPersister(
        vcr.persister,
        Detector(secrets),
        provenance=provenance,
        before=before,
        recording=recording,
    )
    vcr.register_persister(persister)
    return persister


def refusal_of(cassette: Any) -> str | None:
    """The refusal message of a cassette whose save was refused (or None)."""
    persister = getattr(cassette, "_persister", None)
    return persister.refusal if isinstance(persister, GuardedPersister) else None
