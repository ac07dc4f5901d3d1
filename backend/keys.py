"""Placeholder; replaced by the keyring-backed store."""


class KeyStore:
    def get(self, provider_id):
        return None
