#!/usr/bin/env python3
"""Independent reference for lfsync's chunking, written from PROTOCOL.md alone.

Regenerates fastcdc-golden.json: the cut points of 8 MiB of SplitMix64 output
(seed 0x6c6673796e63, each 64-bit output little-endian) under the default
configuration. The Swift test suite checks the Swift chunker against this file,
so the two implementations must agree byte for byte.

    python3 fastcdc_reference.py > fastcdc-golden.json
"""
import hashlib
import json

MASK64 = (1 << 64) - 1
SEED = 0x6C6673796E63
LENGTH = 8 << 20
MIN, AVG, MAX = 64 << 10, 256 << 10, 1 << 20


def splitmix64_bytes(seed, count):
    state = seed
    out = bytearray()
    while len(out) < count:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:count])


def gear_table():
    domain = b"lfsync-fastcdc-gear-v1"
    return [int.from_bytes(hashlib.blake2b(domain + bytes([i]), digest_size=32).digest()[:8], "little")
            for i in range(256)]


def top_bits(n):
    return (MASK64 << (64 - n)) & MASK64


def cut_points(data):
    gear = gear_table()
    bits = AVG.bit_length() - 1
    mask_small, mask_large = top_bits(bits + 2), top_bits(bits - 2)
    cuts, start = [], 0
    while start < len(data):
        remaining = len(data) - start
        if remaining <= MIN:
            cuts.append(len(data))
            break
        end = min(remaining, MAX)
        normal = min(end, AVG)
        fp, i, cut = 0, MIN, None
        while i < normal:
            fp = ((fp << 1) + gear[data[start + i]]) & MASK64
            i += 1
            if fp & mask_small == 0:
                cut = i
                break
        if cut is None:
            while i < end:
                fp = ((fp << 1) + gear[data[start + i]]) & MASK64
                i += 1
                if fp & mask_large == 0:
                    cut = i
                    break
        if cut is None:
            cut = end
        start += cut
        cuts.append(start)
    return cuts


if __name__ == "__main__":
    data = splitmix64_bytes(SEED, LENGTH)
    cuts = cut_points(data)
    print(json.dumps({
        "description": "FastCDC cut points (end offsets) for 8 MiB of SplitMix64(seed) output, default configuration",
        "seed": SEED, "length": LENGTH, "minSize": MIN, "averageSize": AVG, "maxSize": MAX,
        "firstBytesHex": data[:16].hex(),
        "gear0Hex": "%016x" % gear_table()[0],
        "cutPoints": cuts,
    }, indent=1))
