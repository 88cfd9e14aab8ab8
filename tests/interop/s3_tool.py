"""Bucket chores for zv's S3 tests, done with boto3 (independently of zv's own client).

    python s3_tool.py ENDPOINT mkbucket BUCKET
    python s3_tool.py ENDPOINT upload BUCKET PREFIX DIR     every file under DIR, keys PREFIX/relative/path
    python s3_tool.py ENDPOINT keys BUCKET PREFIX           the keys under PREFIX/ as a JSON list
    python s3_tool.py ENDPOINT download BUCKET PREFIX DIR   every key under PREFIX/ to DIR/rest/of/key

The test server (moto) accepts any credentials.
"""

import json
import os
import sys

import boto3


def client(endpoint):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="zv-test",
        aws_secret_access_key="zv-test",
        region_name="us-east-1",
    )


def main():
    endpoint, command, bucket = sys.argv[1], sys.argv[2], sys.argv[3]
    s3 = client(endpoint)
    if command == "mkbucket":
        s3.create_bucket(Bucket=bucket)
    elif command == "upload":
        prefix, directory = sys.argv[4], sys.argv[5]
        for root, _dirs, files in os.walk(directory):
            for name in files:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, directory).replace(os.sep, "/")
                s3.upload_file(path, bucket, f"{prefix}/{rel}")
    elif command == "download":
        prefix, directory = sys.argv[4], sys.argv[5]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
            for o in page.get("Contents", []):
                path = os.path.join(directory, *o["Key"][len(prefix) + 1:].split("/"))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                s3.download_file(bucket, o["Key"], path)
    elif command == "keys":
        prefix = sys.argv[4]
        keys = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
            keys += [o["Key"] for o in page.get("Contents", [])]
        print(json.dumps(sorted(keys)))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
