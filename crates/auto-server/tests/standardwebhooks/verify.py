"""Checks webhook deliveries with the Standard Webhooks project's own library (PyPI
standardwebhooks), as a receiver would.

Reads one JSON object on stdin: {"secret": "whsec_...", "deliveries": [{"headers": {...},
"body": "the body as received"}]}. For each delivery it prints one JSON line: what the library
says of the delivery as received, of its body with one character changed, of its timestamp put
ten minutes back, and of a check with another secret; "ok" or the library's refusal.
"""

import json
import sys
import time

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

OTHER_SECRET = "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="


def verdict(secret, body, headers):
    try:
        Webhook(secret).verify(body, headers)
        return "ok"
    except WebhookVerificationError as refusal:
        return str(refusal)


def main():
    order = json.load(sys.stdin)
    secret = order["secret"]
    for delivery in order["deliveries"]:
        headers, body = delivery["headers"], delivery["body"]
        tampered = body.replace("open", "OPEN", 1)
        assert tampered != body, "the body has no 'open' to change"
        old = dict(headers, **{"webhook-timestamp": str(int(time.time()) - 600)})
        print(json.dumps({
            "as_received": verdict(secret, body.encode(), headers),
            "tampered_body": verdict(secret, tampered.encode(), headers),
            "old_timestamp": verdict(secret, body.encode(), old),
            "other_secret": verdict(OTHER_SECRET, body.encode(), headers),
        }), flush=True)


if __name__ == "__main__":
    main()
