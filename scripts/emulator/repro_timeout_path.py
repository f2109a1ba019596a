# A minimal reproduction of the TimeoutSecondsPath gap (docs/emulator.md), for an emulator's
# maintainers: one Task that waits for a callback nobody sends, its timeout taken from the input.
# On AWS the Task fails with States.Timeout after 2 s and the Catch ends the execution in
# `TimedOut`; an emulator that ignores TimeoutSecondsPath keeps it RUNNING.
#
# Usage: repro_timeout_path.py <endpoint>   (prints one line; exit 0 when the Task timed out)
import json
import sys
import time

import botocore.session


def main(endpoint):
    session = botocore.session.get_session()
    kwargs = dict(region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test")
    sqs = session.create_client("sqs", **kwargs)
    sfn = session.create_client("stepfunctions", **kwargs)
    queue_url = sqs.create_queue(QueueName="timeout-path-repro")["QueueUrl"]
    definition = {
        "StartAt": "Await",
        "States": {
            "Await": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                "Parameters": {"QueueUrl": queue_url, "MessageBody": {"token.$": "$$.Task.Token"}},
                "TimeoutSecondsPath": "$.t",
                "Catch": [{"ErrorEquals": ["States.Timeout"], "Next": "TimedOut"}],
                "End": True,
            },
            "TimedOut": {"Type": "Pass", "Result": "timed out", "End": True},
        },
    }
    machine = sfn.create_state_machine(
        name="timeout-path-repro",
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::000000000000:role/repro",
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"t": 2}))["executionArn"]
    started = time.monotonic()
    while time.monotonic() - started < 10:
        described = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            break
        time.sleep(0.25)
    output = described.get("output")
    print(f"after {time.monotonic() - started:.1f} s: status {described['status']}, output {output}")
    return 0 if output == json.dumps("timed out") else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: repro_timeout_path.py <endpoint>")
    sys.exit(main(sys.argv[1]))
