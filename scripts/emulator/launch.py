# Starts ministack (requirements/emulator.txt) in the foreground with one Step Functions fix that
# the deployed state machine needs and ministack 1.5.33 lacks: a Task's `TimeoutSecondsPath`.
#
# ministack's Task executor reads only a static `TimeoutSeconds`, so a Task whose timeout comes from
# its input (tessera's Await step: `TimeoutSecondsPath: $.Payload.timeoutSeconds`) waits for its
# callback forever and never raises States.Timeout. The fix below resolves the path as the Amazon
# States Language specifies it: a reference path into the state's input, whose value must be a
# positive integer, else the Task fails with States.Runtime. It then hands the executor a copy of the
# state with `TimeoutSeconds` set, so every timeout path ministack already has (synchronous tasks
# and waitForTaskToken callbacks) applies unchanged. `_resolve_timeout_seconds_path` is written to
# be moved as is into ministack's services/stepfunctions.py and called at the top of
# `_execute_task`; docs/emulator.md describes the gap for its maintainers.
#
# Usage: GATEWAY_PORT=4566 .venv-emulator/bin/python scripts/emulator/launch.py
import importlib.metadata
import sys

PATCHED_FOR = "1.5.33"

installed = importlib.metadata.version("ministack")
if installed != PATCHED_FOR:
    sys.exit(
        f"launch.py: ministack {installed} is installed, but this launcher patches {PATCHED_FOR}'s "
        "Step Functions internals; check the gap in docs/emulator.md against the new version first."
    )

from ministack.services import stepfunctions as sfn  # noqa: E402  (after the version check)


def _resolve_timeout_seconds_path(state_def, raw_input, ctx):
    """A copy of `state_def` whose `TimeoutSecondsPath` is resolved into `TimeoutSeconds`.

    The path is a reference path against the state input (`$$.` paths against the context
    object). A value that is not a positive integer fails the Task with States.Runtime, as on AWS.
    """
    path = state_def.get("TimeoutSecondsPath")
    if path is None or "TimeoutSeconds" in state_def:
        return state_def
    value = sfn._resolve_path_or_ctx(path, raw_input, ctx)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise sfn._ExecutionError(
            "States.Runtime",
            f"TimeoutSecondsPath {path} must select a positive integer; found {value!r}",
        )
    return {**state_def, "TimeoutSeconds": value}


_execute_task = sfn._execute_task


def _execute_task_with_timeout_path(state_def, raw_input, execution, ctx):
    return _execute_task(_resolve_timeout_seconds_path(state_def, raw_input, ctx), raw_input, execution, ctx)


# The executor looks `_execute_task` up in the module's globals on every state, so replacing the
# module attribute reaches every Task, inside Map and Parallel branches too.
sfn._execute_task = _execute_task_with_timeout_path

from ministack.app import main  # noqa: E402

sys.argv = [sys.argv[0]]
main()
