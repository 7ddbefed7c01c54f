#!/usr/bin/env python3
"""Writes the grain shapes of this directory, deterministically (no dependencies).

    python3 make_shapes.py

* rock.obj: two crushed-rock-like grains (objects `rock_a`, `rock_b`): a subdivided
  icosahedron whose vertices are pushed in and out at random, so that it has dents — not
  convex: `talus check` reports the volume its convex hull adds.
* pebble.stl (binary): a cube-ish pebble, a rounded cube (superellipsoid), convex.
* tablet.ply (binary little-endian): a pill, a short cylinder with domed faces.
* sand.xyz: a point cloud of an angular sand grain.

Units are millimetres-ish; the scenario scales every shape to its grain diameter.
"""

import math
import random
import struct

def icosphere(levels):
    t = (1.0 + 5.0 ** 0.5) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [normalize(v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        cache = {}
        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                va, vb = verts[a], verts[b]
                verts.append(normalize(tuple((x + y) / 2 for x, y in zip(va, vb))))
                cache[key] = len(verts) - 1
            return cache[key]
        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return verts, faces

def normalize(v):
    n = math.sqrt(sum(x * x for x in v))
    return tuple(x / n for x in v)

def fmt(x):
    return f"{x:.6f}"

def rock(seed):
    rng = random.Random(seed)
    verts, faces = icosphere(1)
    # A few broad facets (flattened caps) and random dents and bumps.
    planes = [normalize((rng.gauss(0, 1), rng.gauss(0, 1), rng.gauss(0, 1))) for _ in range(5)]
    axes = (1.0, 0.8, 0.62)
    out = []
    for v in verts:
        r = 1.0 + rng.uniform(-0.22, 0.12)
        p = [r * a * x for a, x in zip(axes, v)]
        for n in planes:
            d = sum(a * b for a, b in zip(p, n))
            if d > 0.7:
                p = [x - (d - 0.7) * m for x, m in zip(p, n)]
        out.append(tuple(3.0 * x for x in p))
    return out, faces

def write_obj():
    lines = ["# Two crushed-rock-like grains (not convex); written by make_shapes.py"]
    base = 0
    for name, seed in (("rock_a", 11), ("rock_b", 23)):
        verts, faces = rock(seed)
        lines.append(f"o {name}")
        lines += [f"v {fmt(x)} {fmt(y)} {fmt(z)}" for x, y, z in verts]
        lines += [f"f {a + 1 + base} {b + 1 + base} {c + 1 + base}" for a, b, c in faces]
        base += len(verts)
    open("rock.obj", "w").write("\n".join(lines) + "\n")

def write_stl():
    verts, faces = icosphere(1)
    # A superellipsoid of exponent 6: a cube with rounded edges and corners.
    def squash(v):
        n = sum(abs(x) ** 6 for x in v) ** (1 / 6)
        return tuple(2.0 * x / n for x in v)
    verts = [squash(v) for v in verts]
    data = bytearray(b"talus pebble: a rounded cube, binary STL".ljust(80, b" "))
    data += struct.pack("<I", len(faces))
    for a, b, c in faces:
        pa, pb, pc = verts[a], verts[b], verts[c]
        u = [y - x for x, y in zip(pa, pb)]
        w = [y - x for x, y in zip(pa, pc)]
        n = normalize((u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]))
        data += struct.pack("<12fH", *n, *pa, *pb, *pc, 0)
    open("pebble.stl", "wb").write(bytes(data))

def write_ply():
    # A pill: radius 3, a cylinder of height 1.2 between two spherical domes of height 0.8.
    segments, rings = 16, 3
    radius, half, dome = 3.0, 0.6, 0.8
    verts = [(0.0, 0.0, half + dome)]
    profile = []
    for k in range(1, rings + 1):
        s = k / rings
        profile.append((radius * math.sin(s * math.pi / 2), half + dome * math.cos(s * math.pi / 2)))
    profile += [(r, -z) for r, z in reversed(profile)]
    for r, z in profile:
        for j in range(segments):
            a = 2 * math.pi * j / segments
            verts.append((r * math.cos(a), r * math.sin(a), z))
    verts.append((0.0, 0.0, -half - dome))
    faces = []
    ring = lambda i, j: 1 + i * segments + j % segments
    for j in range(segments):
        faces.append((0, ring(0, j), ring(0, j + 1)))
    for i in range(len(profile) - 1):
        for j in range(segments):
            faces.append((ring(i, j), ring(i + 1, j), ring(i + 1, j + 1), ring(i, j + 1)))
    last = len(verts) - 1
    for j in range(segments):
        faces.append((last, ring(len(profile) - 1, j + 1), ring(len(profile) - 1, j)))
    header = ("ply\nformat binary_little_endian 1.0\ncomment a tablet, written by make_shapes.py\n"
              f"element vertex {len(verts)}\nproperty float x\nproperty float y\nproperty float z\n"
              f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
    data = bytearray(header.encode())
    for v in verts:
        data += struct.pack("<3f", *v)
    for f in faces:
        data += struct.pack("<B", len(f)) + struct.pack(f"<{len(f)}i", *f)
    open("tablet.ply", "wb").write(bytes(data))

def write_xyz():
    rng = random.Random(5)
    lines = ["# A sand grain as a point cloud (x y z); written by make_shapes.py", "x y z"]
    axes = (1.3, 1.0, 0.75)
    for _ in range(60):
        v = normalize((rng.gauss(0, 1), rng.gauss(0, 1), rng.gauss(0, 1)))
        r = rng.uniform(0.85, 1.0)
        lines.append(" ".join(fmt(2.0 * r * a * x) for a, x in zip(axes, v)))
    open("sand.xyz", "w").write("\n".join(lines) + "\n")

write_obj()
write_stl()
write_ply()
write_xyz()
