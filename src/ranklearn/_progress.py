"""A rich progress bar usable as a training callback (the CLI and estimators' ``verbose``)."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def format_results(results: dict[str, dict[str, float]]) -> str:
    """``{"valid": {"ndcg@10": 0.5}}`` -> ``"valid ndcg@10=0.5000"``."""
    return "  ".join(f"{name} {metric}={value:.4f}" for name, values in results.items() for metric, value in values.items())


class TrainingProgress:
    """Progress bar for iterations or epochs, showing the latest evaluation results.

    Call it as a training callback, ``progress(iteration, total, results)``, after every
    iteration (``iteration`` = iterations completed, 1-based); the training driver calls
    ``end(message)`` when training ends (early stopping, the last iteration, Ctrl-C), which
    prints where it stopped and which iteration was kept; ``close()`` (or leaving a
    ``with`` block) ends the display, also after early stopping or an interrupt; leaving a
    ``with`` block on an error erases it. It draws on stderr so that stdout stays clean for
    results.

    Parameters
    ----------
    total : int or None
        Planned number of iterations or epochs (None: unknown until the first call).
    description : str
        Label in front of the bar, e.g. the model name.
    console : rich.console.Console, optional
        Where to draw (default: a stderr console).
    """

    def __init__(self, total: int | None, *, description: str = "training", console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[results]}"),
            console=console if console is not None else Console(stderr=True),
        )
        self._task = self._progress.add_task(description, total=total, results="")
        self._description = description
        self._started = False

    def __call__(self, iteration: int, total: int, results: dict[str, dict[str, float]]) -> None:
        # Drawn from the first completed iteration on, so a fit that fails its parameter
        # checks leaves no empty bar behind.
        if not self._started:
            self._progress.start()
            self._started = True
        self._progress.update(self._task, completed=iteration, total=total, results=format_results(results))

    def end(self, message: str) -> None:
        """Stop the bar and say where training stopped and which iteration was kept."""
        self.close()
        # one line whatever the width: off a terminal rich would wrap at 80 columns, and logs are grepped
        self._progress.console.print(f"{self._description}: {message}", highlight=False, markup=False, soft_wrap=True)

    def close(self, *, clear: bool = False) -> None:
        """Stop the live display (idempotent); ``clear=True`` also erases the bar."""
        if self._started:
            if clear:
                # Live.stop erases a transient display; Progress.stop would add an empty
                # line on a non-interactive console.
                self._progress.live.transient = True
                self._progress.live.stop()
            else:
                self._progress.stop()
            self._started = False

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # An error erases the bar, so that the error is all that is left (the CLI's one line);
        # after Ctrl-C the bar stays and shows how far training got.
        self.close(clear=exc_type is not None and issubclass(exc_type, Exception))
