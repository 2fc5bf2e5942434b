#!/bin/sh
# Turns a fresh `debootstrap --variant=minbase bookworm DIR` into a container base, the way Debian's
# official docker images are made (debuerreotype): no services started by package scripts, no
# recommends, no documentation or man pages, empty apt lists and caches.
#
#   sh setup-rootfs.sh ROOTFS MIRROR SECURITY_MIRROR SUITE
#
# Runs on the host (root), against the unpacked root file system; build.sh then tars and imports it.
set -eu
root="$1"
mirror="$2"
security="$3"
suite="$4"

[ -x "$root/usr/bin/apt-get" ] || { echo "setup-rootfs: $root is not a debootstrapped tree" >&2; exit 1; }

# Package scripts must not start daemons inside a build (redis-server, postgresql would try).
cat >"$root/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
# Containers start their own processes: package scripts never start a service here.
exit 101
EOF
chmod 0755 "$root/usr/sbin/policy-rc.d"

# The bookworm point releases plus security updates, like the official debian:bookworm images.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF

cat >"$root/etc/apt/apt.conf.d/90invoicing-container" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
Acquire::CompressionTypes::Order:: "gz";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF

# As the -slim images: no docs, man pages or translations (copyright files stay).
cat >"$root/etc/dpkg/dpkg.cfg.d/90invoicing-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/groff/"* 2>/dev/null || true
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} + 2>/dev/null || true

# Some postinst scripts (openjdk's ca-certificates-java among them) expect these directories.
mkdir -p "$root/usr/share/man/man1"

# Nothing of the host's state in the image.
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb \
  "$root/var/log/"*.log "$root/var/log/apt/"* "$root/tmp/"* "$root/root/.cache" 2>/dev/null || true
: >"$root/etc/machine-id"
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"
printf '%s\n' 'The invoicing project, from deploy/local-images/base/setup-rootfs.sh' >"$root/etc/invoicing-local-image"
