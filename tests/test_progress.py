"""The progress bar's end message and the CLI's status lines: one line each, whatever the width."""

from __future__ import annotations

from ranklearn._progress import TrainingProgress
from _helpers import run
from test_cli import small_files  # noqa: F401  (fixture)


def test_end_message_is_one_line_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    # logs are grepped: a status line must not be cut at the 80 columns rich assumes off a terminal
    monkeypatch.delenv("COLUMNS", raising=False)
    message = "ran all 3 trees; kept tree 3 (best: " + "validate ndcg@10=0.5000 " * 6 + "at 3)"
    progress = TrainingProgress(3, description="lambdamart")
    progress(1, 3, {"validate": {"ndcg@10": 0.5}})
    progress.end(message)
    err = capsys.readouterr().err
    assert f"lambdamart: {message}\n" in err


def test_conventions_footer_is_one_line(capsys, monkeypatch, small_files):  # noqa: F811
    monkeypatch.delenv("COLUMNS", raising=False)
    scores = small_files["train"].with_suffix(".scores")
    from ranklearn.data import load_svmlight

    n = load_svmlight(small_files["train"]).y.size
    scores.write_text("".join(f"{i % 7}\n" for i in range(n)))
    code, out, _ = run(capsys, "evaluate", "--data", small_files["train"], "--scores", scores,
                       "--metric", "ndcg@10", "--metric", "err@10", "--metric", "map", "--metric", "p@5", "--metric", "rr@10", "--metric", "dcg@5")  # fmt: skip
    assert code == 0, out
    footer = [line for line in out.splitlines() if line.startswith("conventions:")]
    # every metric's conventions on the one footer line, and nothing of it on the next
    assert len(footer) == 1 and len(footer[0]) > 80 and all(m in footer[0] for m in ("ndcg@10", "err@10", "map", "p@5"))
    assert out.splitlines()[-1] == footer[0]
