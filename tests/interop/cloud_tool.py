"""Container and bucket chores for zv's tests on the cloud emulators, done independently of
zv's own client: Azure Blob Storage (Azurite) with the Azure SDK for Python, Google Cloud
Storage (fake-gcs-server) with its JSON API and the standard library.

    python cloud_tool.py SERVICE ENDPOINT mkbucket NAME
    python cloud_tool.py SERVICE ENDPOINT upload NAME PREFIX DIR     every file under DIR, as PREFIX/relative/path
    python cloud_tool.py SERVICE ENDPOINT keys NAME PREFIX           the names under PREFIX/ as a JSON list
    python cloud_tool.py SERVICE ENDPOINT download NAME PREFIX DIR   every name under PREFIX/ to DIR/rest/of/name

SERVICE is `az` (ENDPOINT: the account's blob endpoint, http://127.0.0.1:PORT/devstoreaccount1;
the emulator's published account key) or `gs` (ENDPOINT: http://127.0.0.1:PORT). An empty
PREFIX is the container's (bucket's) root.
"""

import json
import os
import sys
import urllib.parse
import urllib.request

AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class Azure:
    def __init__(self, endpoint, container):
        from azure.storage.blob import BlobServiceClient

        connection = (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint};"
        )
        self.service = BlobServiceClient.from_connection_string(connection)
        self.container = self.service.get_container_client(container)

    def create(self):
        self.container.create_container()

    def put(self, name, data):
        self.container.upload_blob(name, data, overwrite=True)

    def get(self, name):
        return self.container.download_blob(name).readall()

    def names(self, prefix):
        return [b.name for b in self.container.list_blobs(name_starts_with=prefix)]


class Gcs:
    def __init__(self, endpoint, bucket):
        self.endpoint = endpoint
        self.bucket = bucket

    def call(self, method, path, query=None, data=None):
        url = self.endpoint + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/octet-stream")
        with urllib.request.urlopen(request) as response:
            return response.read()

    def object_path(self, name):
        return f"/storage/v1/b/{self.bucket}/o/" + urllib.parse.quote(name, safe="")

    def create(self):
        body = json.dumps({"name": self.bucket}).encode()
        self.call("POST", "/storage/v1/b", {"project": "zv-test"}, body)

    def put(self, name, data):
        query = {"uploadType": "media", "name": name}
        self.call("POST", f"/upload/storage/v1/b/{self.bucket}/o", query, data)

    def get(self, name):
        return self.call("GET", self.object_path(name), {"alt": "media"})

    def names(self, prefix):
        out, token = [], None
        while True:
            query = {"prefix": prefix}
            if token:
                query["pageToken"] = token
            page = json.loads(self.call("GET", f"/storage/v1/b/{self.bucket}/o", query))
            out += [o["name"] for o in page.get("items", [])]
            token = page.get("nextPageToken")
            if not token:
                return out


def main():
    service, endpoint, command, name = sys.argv[1:5]
    client = {"az": Azure, "gs": Gcs}[service](endpoint, name)
    if command == "mkbucket":
        client.create()
        return
    prefix = sys.argv[5]
    under = prefix + "/" if prefix else ""
    if command == "upload":
        directory = sys.argv[6]
        for root, _dirs, files in os.walk(directory):
            for file in files:
                path = os.path.join(root, file)
                rel = os.path.relpath(path, directory).replace(os.sep, "/")
                with open(path, "rb") as f:
                    client.put(under + rel, f.read())
    elif command == "download":
        directory = sys.argv[6]
        for key in client.names(under):
            path = os.path.join(directory, *key[len(under):].split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(client.get(key))
    elif command == "keys":
        print(json.dumps(sorted(client.names(under))))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
