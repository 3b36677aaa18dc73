# tools/rootfs_mounts.sh: sourced by tools/bazel. Binds host folders into the rootfs inside the
# persistent private mount namespace, and re-binds them when the binding went stale.
#
# Why stale bindings happen: the namespace outlives checkouts. A bind mount pins the directory
# it was made from, so after `rm -rf checkout && git clone ... checkout` (same path) the
# namespace still shows the deleted directory at that path: the Bazel client then fails with
# "can't cd to .../examples". A path that is mounted but names another directory (device and
# inode differ from the host's) is unmounted and bound again.

# bind_into_rootfs HOLDER_PID ROOTFS DIR: makes DIR (host path) visible at ROOTFS/DIR in the
# mount namespace of HOLDER_PID, reusing a binding only while it is the host's current DIR.
bind_into_rootfs() {
  local holder=$1 rootfs=$2 dir=$3 host_id
  host_id=$(stat -L -c '%d:%i' "$dir")
  nsenter --target "$holder" --mount bash -c '
    set -e
    rootfs=$1 dir=$2 host_id=$3 mnt=$1$2
    if grep -q " $mnt " /proc/self/mountinfo; then
      # The host path is not visible from inside the chroot prefix, but it is here: the
      # namespace shares the host root. A binding of the deleted directory has another inode.
      if [ "$(stat -L -c %d:%i "$mnt" 2>/dev/null)" = "$host_id" ]; then
        exit 0
      fi
      # Lazily: a Bazel server may still have its working directory in the stale tree.
      while grep -q " $mnt " /proc/self/mountinfo; do umount -l "$mnt"; done
    fi
    mkdir -p "$mnt"
    mount --bind "$dir" "$mnt"
  ' _ "$rootfs" "$dir" "$host_id"
}
