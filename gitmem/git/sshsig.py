"""git's verdict on an SSH-signed commit, given in-process where it is certain to be git's.

git's ``%G?`` runs ``ssh-keygen -Y find-principals`` and ``-Y verify`` per commit (19 ms
each: 140 s for 10k commits a remote wrote, against a budget of 10 s). The SSHSIG format
(OpenSSH's ``PROTOCOL.sshsig``) is small: the signer's public key, a namespace (``git``),
a hash of the payload, a signature over them, checked here with ``cryptography``.

Only what gitmem relies on is decided here, and only as git would: an allowed signers file
of plain lines (one principal without patterns, no option but ``namespaces="git"``, each
key once); ed25519, RSA (SHA-2) and ECDSA keys; a signature that holds. Anything else
(certificates, ``valid-after``, a revocation file, another ssh program, a signature that
does not hold) is ``None``: git is asked, so a verdict never differs from git's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from gitmem.git.formats import signed_parts

BEGIN, END = b"-----BEGIN SSH SIGNATURE-----", b"-----END SSH SIGNATURE-----"
_CURVES: dict[bytes, tuple[ec.EllipticCurve, hashes.HashAlgorithm, int]] = {
    b"ecdsa-sha2-nistp256": (ec.SECP256R1(), hashes.SHA256(), 256),
    b"ecdsa-sha2-nistp384": (ec.SECP384R1(), hashes.SHA384(), 384),
    b"ecdsa-sha2-nistp521": (ec.SECP521R1(), hashes.SHA512(), 521),
}
_RSA_HASHES = {b"rsa-sha2-256": hashes.SHA256(), b"rsa-sha2-512": hashes.SHA512()}
# A line of allowed_signers as gitmem writes it: principal, namespaces="git", key, comment.
_PLAIN = re.compile(
    r'([^\s"*?!,#][^\s"*?!,]*) (?:namespaces="git" )?'
    r"(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)) ([A-Za-z0-9+/]+={0,2})(?: .*)?"
)
# git's settings that change how it checks a signature: any of them, and git decides.
_GIT_DECIDES = ("gpg.ssh.revocationfile", "gpg.ssh.program")

Verdict = tuple[str, str, str]  # git's %G? letter, %GK (the key's fingerprint), %GS


class _Reader:
    """SSH's wire format (RFC 4251): strings and integers, a ValueError past the end."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError("truncated")
        self.at += n
        return self.data[self.at - n : self.at]

    def uint32(self) -> int:
        return int.from_bytes(self.take(4), "big")

    def string(self) -> bytes:
        return self.take(self.uint32())

    def mpint(self) -> int:
        raw = self.string()
        if (raw[:1] == b"\0" and raw[1:2] < b"\x80") or raw[:1] >= b"\x80":
            raise ValueError("not a canonical positive mpint")  # OpenSSH refuses it too
        return int.from_bytes(raw, "big")

    def done(self) -> bool:
        return self.at == len(self.data)


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def fingerprint(key: bytes) -> str:
    """A public key's fingerprint as git shows it (``%GK``): ``SHA256:`` and base64."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key).digest()).decode().rstrip("=")


def signers(settings: Mapping[str, str]) -> dict[bytes, str] | None:
    """The keys of git's allowed signers file (``settings``: git's config, lower-case keys
    as ``git config --list`` gives them), each with its principal; None when git must
    decide: no such file, or one with anything but plain lines, or settings this does
    not follow."""
    name = settings.get("gpg.ssh.allowedsignersfile")
    if not name or any(k in settings for k in _GIT_DECIDES) or not Path(name).is_absolute():
        return None
    try:
        text = Path(name).read_text("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    found: dict[bytes, str] = {}
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        plain = _PLAIN.fullmatch(line)
        if plain is None:
            return None
        try:
            key = base64.b64decode(plain[3], validate=True)
            kind = _public(key)[0]
        except (binascii.Error, ValueError):
            return None
        if kind != plain[2].encode() or key in found:
            return None
        found[key] = plain[1]
    return found


def verdict(commit: bytes, header: bytes, known: Mapping[bytes, str]) -> Verdict | None:
    """git's verdict on a commit object's signature (``header``: ``gpgsig``, or
    ``gpgsig-sha256`` in a sha256 repository) against the allowed signers ``known``:
    ``N`` unsigned, ``G`` a good signature by a known key, ``U`` by another key; None
    when git must decide."""
    parts = signed_parts(commit, header)
    if parts is None:
        return "N", "", ""
    payload, armored = parts
    try:
        key, hashalg, sig = _parse(armored)
        ok = _holds(key, sig, _signed_data(payload, hashalg))
    except ValueError:
        return None
    if not ok:
        return None  # git says why (a bad signature, or one OpenSSH reads otherwise)
    principal = known.get(key)
    return ("G", fingerprint(key), principal) if principal else ("U", fingerprint(key), "")


def sign(private: bytes, payload: bytes) -> bytes | None:
    """``payload`` signed as ``ssh-keygen -Y sign -n git`` signs it, armored as git keeps
    it (ed25519 signatures are deterministic: the same bytes); None unless ``private`` is
    an OpenSSH ed25519 key without a passphrase (ssh-keygen signs with the others)."""
    try:
        key = serialization.load_ssh_private_key(private, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    public = _string(b"ssh-ed25519") + _string(raw)
    sig = _string(b"ssh-ed25519") + _string(key.sign(_signed_data(payload, b"sha512")))
    fields = (public, b"git", b"", b"sha512", sig)
    blob = base64.b64encode(b"SSHSIG" + (1).to_bytes(4, "big") + b"".join(map(_string, fields)))
    return b"\n".join([BEGIN, *(blob[i : i + 70] for i in range(0, len(blob), 70)), END]) + b"\n"


def _parse(armored: bytes) -> tuple[bytes, bytes, bytes]:
    """An armored SSHSIG's key, hash algorithm and signature; ValueError for anything
    but version 1, namespace ``git``, no reserved data, sha256 or sha512."""
    lines = armored.rstrip(b"\n").split(b"\n")
    if len(lines) < 3 or lines[0] != BEGIN or lines[-1] != END:
        raise ValueError("not an SSH signature")
    try:
        blob = base64.b64decode(b"".join(lines[1:-1]), validate=True)
    except binascii.Error:
        raise ValueError("bad base64") from None
    r = _Reader(blob)
    if r.take(6) != b"SSHSIG" or r.uint32() != 1:
        raise ValueError("not SSHSIG version 1")
    key, namespace, reserved, hashalg, sig = (r.string() for _ in range(5))
    if not r.done() or namespace != b"git" or reserved or hashalg not in (b"sha256", b"sha512"):
        raise ValueError("an SSHSIG git does not make")
    return key, hashalg, sig


def _signed_data(payload: bytes, hashalg: bytes) -> bytes:
    digest = hashlib.new(hashalg.decode(), payload).digest()
    return b"SSHSIG" + _string(b"git") + _string(b"") + _string(hashalg) + _string(digest)


PublicKey = ed25519.Ed25519PublicKey | rsa.RSAPublicKey | ec.EllipticCurvePublicKey


def _public(key: bytes) -> tuple[bytes, PublicKey]:
    """A public key in SSH's encoding, read as OpenSSH reads it (canonical, whole);
    ValueError for one that OpenSSH may read otherwise, or a type not decided here."""
    k = _Reader(key)
    kind = k.string()
    public: PublicKey
    if kind == b"ssh-ed25519":
        raw = k.string()
        if len(raw) != 32:
            raise ValueError("not an ed25519 key")
        public = ed25519.Ed25519PublicKey.from_public_bytes(raw)
    elif kind == b"ssh-rsa":
        e, n = k.mpint(), k.mpint()
        if not 1024 <= n.bit_length() <= 16384:
            raise ValueError("an RSA key size OpenSSH refuses")
        public = rsa.RSAPublicNumbers(e, n).public_key()
    elif kind in _CURVES:
        curve, _, bits = _CURVES[kind]
        name, point = k.string(), k.string()
        if name != kind.rsplit(b"-", 1)[1] or point[:1] != b"\x04":
            raise ValueError("not an uncompressed point on the key type's curve")
        public = ec.EllipticCurvePublicKey.from_encoded_point(curve, point)
        xy = public.public_numbers()
        if min(xy.x.bit_length(), xy.y.bit_length()) <= bits // 2:
            raise ValueError("an EC key OpenSSH refuses")  # (sshkey_ec_validate_public)
    else:
        raise ValueError("a key type not decided here")
    if not k.done():
        raise ValueError("trailing data")
    return kind, public


def _holds(key: bytes, sig: bytes, data: bytes) -> bool:
    """Whether ``sig`` (SSH's signature encoding) by ``key`` holds over ``data``;
    ValueError for a key or signature this does not read as OpenSSH does."""
    kind, public = _public(key)
    s = _Reader(sig)
    sig_kind, raw = s.string(), s.string()
    if not s.done():
        raise ValueError("trailing data")
    try:
        if isinstance(public, ed25519.Ed25519PublicKey) and sig_kind == kind and len(raw) == 64:
            public.verify(raw, data)
        elif isinstance(public, rsa.RSAPublicKey) and sig_kind in _RSA_HASHES:
            if len(raw) != -(-public.key_size // 8):
                raise ValueError("a short RSA signature: OpenSSH pads it")
            public.verify(raw, data, padding.PKCS1v15(), _RSA_HASHES[sig_kind])
        elif isinstance(public, ec.EllipticCurvePublicKey) and sig_kind == kind:
            rs = _Reader(raw)
            r, s_ = rs.mpint(), rs.mpint()
            if not rs.done():
                raise ValueError("trailing data")
            public.verify(encode_dss_signature(r, s_), data, ec.ECDSA(_CURVES[kind][1]))
        else:
            raise ValueError("a signature algorithm not decided here")
    except InvalidSignature:
        return False
    return True
