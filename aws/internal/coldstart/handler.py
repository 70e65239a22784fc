# A minimal Python function for the cold-start comparison: a custom
# runtime's loop over the Lambda Runtime API with urllib, importing boto3
# and making a DynamoDB client at init as the seed's Python functions
# would. Each event reads one item (GetItem) when boto3 is there, and
# answers. NEXTUP_COLDSTART_NO_BOTO3=1, or boto3 missing, skips boto3.
import json
import os
import urllib.request

client = None
if os.environ.get("NEXTUP_COLDSTART_NO_BOTO3") != "1":
    try:
        import boto3

        client = boto3.client(
            "dynamodb",
            endpoint_url=os.environ.get("NEXTUP_COLDSTART_DYNAMODB") or None,
            region_name=os.environ.get("AWS_REGION", "us-east-1"),
        )
    except ImportError:
        client = None

TABLE = os.environ.get("NEXTUP_COLDSTART_TABLE", "coldstart")
BASE = "http://" + os.environ["AWS_LAMBDA_RUNTIME_API"] + "/2018-06-01/runtime/invocation/"


def handle(event):
    if client is None:
        return {"statusCode": 200, "body": json.dumps({"boto3": False})}
    try:
        out = client.get_item(TableName=TABLE, Key={"pk": {"S": "coldstart#none"}}, ConsistentRead=True)
        found = "Item" in out
    except Exception as e:  # a missing table is an answer too
        found = type(e).__name__
    return {"statusCode": 200, "body": json.dumps({"boto3": True, "found": found})}


while True:
    with urllib.request.urlopen(BASE + "next") as r:
        request_id = r.headers["Lambda-Runtime-Aws-Request-Id"]
        event = json.loads(r.read() or b"null")
    body = json.dumps(handle(event)).encode()
    req = urllib.request.Request(BASE + request_id + "/response", data=body, method="POST")
    urllib.request.urlopen(req).read()
