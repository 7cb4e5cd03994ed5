# The official Python SDK (UnleashClient) against the server at HALYARD_URL, with the backend
# token HALYARD_TOKEN, in HALYARD_MODE: `streaming`, or `polling` every HALYARD_INTERVAL
# milliseconds (whole seconds, as the SDK counts them; one at least). It evaluates HALYARD_FLAGS for a few users, then switches
# HALYARD_FLAG HALYARD_WRITES times through the admin API (token HALYARD_ADMIN, at
# HALYARD_ADMIN_URL when the SDK reads an edge, else at HALYARD_URL) and measures, for
# each write, the milliseconds from the write's answer until the SDK answers the new state. It
# prints one JSON line: every warning or error the SDK logged, what it evaluated, and the delays.
import json
import logging
import os
import random
import tempfile
import threading
import time
import urllib.request

from UnleashClient import UnleashClient
from UnleashClient.events import UnleashEventType

env = os.environ
flags = env["HALYARD_FLAGS"].split(",")
flag = env["HALYARD_FLAG"]


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name}: {record.getMessage()}")


collected = Collect()
logging.getLogger().addHandler(collected)
ready = threading.Event()


def on_event(event):
    if event.event_type == UnleashEventType.READY:
        ready.set()


mode = env.get("HALYARD_MODE", "streaming")
if mode == "streaming":
    following = {"experimental_mode": {"type": "streaming"}}
elif mode == "polling":
    following = {"refresh_interval": max(1, int(env["HALYARD_INTERVAL"]) // 1000)}
else:
    raise SystemExit(f"HALYARD_MODE is streaming or polling, not {mode}")
client = UnleashClient(
    url=f"{env['HALYARD_URL']}/api",
    app_name=f"python-{mode}-test",
    custom_headers={"Authorization": env["HALYARD_TOKEN"]},
    cache_directory=tempfile.mkdtemp(),
    event_callback=on_event,
    **following,
)
client.initialize_client()
if not ready.wait(10):
    raise SystemExit("the SDK was not ready within 10 s")

evaluated = {}
for user in range(7):
    for plan in ["free", "pro"]:
        for name in flags:
            variant = client.get_variant(name, {"userId": str(user), "properties": {"plan": plan}})
            evaluated[f"{name}/{user}/{plan}"] = {
                "enabled": variant["feature_enabled"],
                "variant": variant["name"],
            }

delays = []
state = client.is_enabled(flag)
for write in range(int(env["HALYARD_WRITES"])):
    state = not state
    path = f"/api/admin/projects/default/features/{flag}/environments/development/{'on' if state else 'off'}"
    request = urllib.request.Request(
        f"{env.get('HALYARD_ADMIN_URL', env['HALYARD_URL'])}{path}", method="POST", headers={"Authorization": env["HALYARD_ADMIN"]}
    )
    with urllib.request.urlopen(request) as response:
        response.read()
    written = time.monotonic()
    while client.is_enabled(flag) != state:
        if time.monotonic() - written > 10:
            raise SystemExit(f"write {write} was not seen within 10 s")
        time.sleep(0.002)
    delays.append(round((time.monotonic() - written) * 1000))
    time.sleep(0.05 + random.random() * 0.2)

client.destroy()
print(json.dumps({"events": collected.records, "evaluated": evaluated, "delays": delays}))
