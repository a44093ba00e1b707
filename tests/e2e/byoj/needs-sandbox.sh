# Sourced by the bring-your-own-job tests: exits 77 (ctest's skip) when this machine cannot give
# a process a mount namespace of its own with an overlay (not root, no user namespaces).
d=$(mktemp -d)
mkdir -p "$d/l" "$d/u" "$d/w" "$d/m"
if ! unshare --mount --propagation private \
    mount -t overlay overlay -o "lowerdir=$d/l,upperdir=$d/u,workdir=$d/w" "$d/m" 2>/dev/null; then
  rm -rf "$d"
  echo "SKIP: no mount namespaces with overlayfs here (pods with volumes need them)"
  exit 77
fi
rm -rf "$d"
