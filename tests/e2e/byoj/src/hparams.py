# Reads key = value lines (the mounted ConfigMap's params.ini) into a dict.
def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.partition("=")
            if sep:
                out[key.strip()] = value.strip()
    return out
