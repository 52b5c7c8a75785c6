#!/usr/bin/env python3
"""Independent reference for lfsync's content hashes, written from PROTOCOL.md alone
("Hashes", "Content ID"), with Python's hashlib and the chunker of fastcdc_reference.py.

Prints the values of content-hashes.json (which `lfsync-bench hash-vectors` writes from
lfsync's own code); the test suite checks that both agree.

    python3 content_hashes_reference.py
"""
import hashlib
import json

from fastcdc_reference import SEED, LENGTH, cut_points, splitmix64_bytes

CHUNK_KEY, FILE_KEY, CONTENT_KEY = b"lfsync/3 chunk", b"lfsync/3 file", b"lfsync/3 content"


def keyed(data, key):
    return hashlib.blake2b(data, digest_size=32, key=key).digest()


def chunk_list(data):
    chunks, start = [], 0
    for end in (cut_points(data) if data else []):
        chunks.append((end - start, keyed(data[start:end], CHUNK_KEY)))
        start = end
    return chunks


def file_hash(chunks):
    encoding = len(chunks).to_bytes(4, "big")
    for length, digest in chunks:
        encoding += length.to_bytes(4, "big") + digest
    return keyed(encoding, FILE_KEY)


def content_id_encoding(files):
    """files: (role byte, file hash) pairs, in any order."""
    ordered = sorted(files)
    encoding = bytes([1]) + len(ordered).to_bytes(4, "big")
    for role, digest in ordered:
        encoding += bytes([role]) + digest
    return encoding


if __name__ == "__main__":
    long = splitmix64_bytes(SEED, LENGTH)
    long_chunks = chunk_list(long)
    live_photo = [(1, file_hash(chunk_list(b"still"))), (2, file_hash(chunk_list(b"video")))]
    encoding = content_id_encoding(live_photo)
    print(json.dumps({
        "description": "lfsync content hashes (PROTOCOL.md, Hashes): keyed BLAKE2b-256, one key per use",
        "keys": {"chunk": CHUNK_KEY.decode(), "file": FILE_KEY.decode(), "content": CONTENT_KEY.decode()},
        "helloChunkHash": keyed(b"hello", CHUNK_KEY).hex(),
        "helloFileHash": file_hash(chunk_list(b"hello")).hex(),
        "emptyFileHash": file_hash([]).hex(),
        "splitmix": {
            "seed": SEED, "length": LENGTH,
            "chunks": [{"length": length, "hash": digest.hex()} for length, digest in long_chunks],
            "fileHash": file_hash(long_chunks).hex(),
        },
        "livePhoto": {
            "stillText": "still", "videoText": "video",
            "encodingHex": encoding.hex(),
            "contentID": keyed(encoding, CONTENT_KEY).hex(),
        },
    }, indent=1, sort_keys=True))
