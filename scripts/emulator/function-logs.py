# Writes every log group of the emulator's CloudWatch Logs to one file per group, so a failed
# e2e case can be read next to the lines the deployed functions logged while it ran
# (docs/emulator.md, "Logs"). Uses botocore from .venv-emulator (a ministack dependency).
#
# Usage: function-logs.py <endpoint> <region> <directory>
# Prints one line per group written: its name, its event count and the file.
import os
import re
import sys

import botocore.session


def main(endpoint, region, directory):
    logs = botocore.session.get_session().create_client("logs", region_name=region, endpoint_url=endpoint, verify=False)
    os.makedirs(directory, exist_ok=True)
    groups = [g["logGroupName"] for page in logs.get_paginator("describe_log_groups").paginate() for g in page["logGroups"]]
    for group in sorted(groups):
        events = [e for page in logs.get_paginator("filter_log_events").paginate(logGroupName=group) for e in page["events"]]
        events.sort(key=lambda e: e["timestamp"])
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", group.strip("/")) + ".log"
        with open(os.path.join(directory, name), "w", encoding="utf-8") as out:
            for event in events:
                out.write(event["message"].rstrip("\n") + "\n")
        print(f"{group}: {len(events)} events in {name}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: function-logs.py <endpoint> <region> <directory>")
    main(*sys.argv[1:])
