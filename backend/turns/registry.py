"""Placeholder registry until the turn engine lands (being written now)."""


class TurnRegistry:
    def __init__(self, config, keys):
        self.config, self.keys = config, keys

    def start(self):
        pass

    def shutdown(self, timeout):
        pass

    def running_chat_ids(self) -> set[str]:
        return set()

    def stop_chat(self, chat_id: str) -> None:
        pass
