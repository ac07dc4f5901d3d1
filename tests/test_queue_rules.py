"""The queue, steer and busy rules of a chat (backend/turns/queue_rules.py), in process: no server, no database."""
import pytest

from backend.turns.queue_rules import MAX_QUEUE, ChatQueue, Idle, Queue, Refuse, Start


def running(*queued: int, steer: tuple[int, ...] = ()) -> ChatQueue:
    """A chat whose turn runs, with these messages waiting (those in `steer` sent to steer)."""
    chat = ChatQueue()
    chat.start()
    for i in queued:
        chat.enqueue(i, steer=i in steer)
    return chat


def test_a_message_to_an_idle_chat_starts_a_turn():
    chat = ChatQueue()
    assert chat.send(closing=False) == Start(None)
    chat.start()
    assert chat.running


def test_steering_an_idle_chat_is_an_ordinary_send():
    assert ChatQueue().send(closing=False, steer=True) == Start(None)


def test_while_a_turn_runs_messages_queue_up_to_the_limit_and_the_next_is_refused():
    chat = running()
    for i in range(1, MAX_QUEUE + 1):
        assert chat.send(closing=False) == Queue(steer=False)
        chat.enqueue(i)
    refused = chat.send(closing=False)
    assert isinstance(refused, Refuse) and refused.code == "queue_full"
    assert f"{MAX_QUEUE} messages are already waiting" in refused.message
    assert chat.send(closing=False, steer=True) == refused  # steering takes a place in the queue too
    assert MAX_QUEUE == 10
    assert [i for i, _ in chat.items()] == list(range(1, 11))


def test_enqueue_without_room_is_a_programming_error_not_an_eleventh_message():
    chat = running(*range(1, MAX_QUEUE + 1))
    with pytest.raises(ValueError):
        chat.enqueue(99)
    with pytest.raises(ValueError):
        ChatQueue().enqueue(1)  # an idle chat starts messages, it never queues them
    assert len(chat.items()) == MAX_QUEUE


def test_queued_messages_run_in_the_order_they_were_sent_then_the_chat_is_idle():
    chat = running(5, 3, 8)
    assert [chat.turn_ended(closing=False) for _ in range(3)] == [Start(5), Start(3), Start(8)]
    assert chat.running
    assert chat.turn_ended(closing=False) == Idle()
    assert not chat.running
    assert chat.send(closing=False) == Start(None)


def test_a_steer_request_queues_marked_as_steering():
    chat = running()
    assert chat.send(closing=False, steer=True) == Queue(steer=True)
    chat.enqueue(7, steer=True)
    chat.enqueue(8)
    assert chat.items() == [(7, True), (8, False)]


def test_discard_takes_one_message_off_and_keeps_the_rest_in_order():
    chat = running(1, 2, 3, steer=(2,))
    assert chat.discard(2) is None
    assert chat.items() == [(1, False), (3, False)]
    again = chat.discard(2)
    assert isinstance(again, Refuse) and again.code == "not_found"
    assert chat.discard(42) == again
    assert chat.turn_ended(closing=False) == Start(1)
    assert chat.discard(1).code == "not_found"  # started: no longer waiting


def test_discard_frees_a_place_in_a_full_queue():
    chat = running(*range(1, MAX_QUEUE + 1))
    assert chat.send(closing=False).code == "queue_full"
    chat.discard(4)
    assert chat.send(closing=False) == Queue()


def test_stop_with_clear_queue_drops_every_waiting_message():
    chat = running(4, 5, 6, steer=(5,))
    assert chat.clear() == [4, 5, 6]
    assert chat.items() == [] and chat.take_steering() == []
    assert chat.running  # the running turn is stopped by its cancel token, not by the rules
    assert chat.turn_ended(closing=False) == Idle()
    assert chat.clear() == []


def test_steering_messages_are_taken_at_a_step_and_plain_ones_stay_queued():
    chat = running(1, 2, 3, 4, steer=(2, 4))
    assert chat.take_steering() == [2, 4]
    assert chat.items() == [(1, False), (3, False)]
    assert chat.take_steering() == []  # a later step finds none
    assert chat.turn_ended(closing=False) == Start(1)


def test_a_steering_message_whose_turn_ended_first_starts_its_own_turn():
    chat = running(9, steer=(9,))
    assert chat.turn_ended(closing=False) == Start(9)
    assert chat.items() == [] and chat.running
    # No longer a steering message: the turn it starts does not take it again at its first step.
    assert chat.take_steering() == []
    assert chat.turn_ended(closing=False) == Idle()


def test_a_leftover_steering_message_waits_its_turn_behind_earlier_plain_ones():
    chat = running(1, 2, steer=(2,))
    assert chat.turn_ended(closing=False) == Start(1)
    # Sent to steer the first turn, it steers the next one at its first step.
    assert chat.take_steering() == [2]
    assert chat.turn_ended(closing=False) == Idle()


@pytest.mark.parametrize("queued", [(), (1, 2)])
def test_edit_regenerate_continue_and_switch_are_refused_while_a_turn_runs(queued):
    busy = running(*queued).check_idle(closing=False)
    assert isinstance(busy, Refuse) and busy.code == "busy"
    assert "Stop it first" in busy.message
    assert ChatQueue().check_idle(closing=False) is None


def test_while_quitting_nothing_new_is_accepted():
    for chat in (ChatQueue(), running(), running(1)):
        sent = chat.send(closing=True)
        assert isinstance(sent, Refuse) and sent.code == "shutting_down"
        assert chat.check_idle(closing=True) == sent  # quitting is said before busy
    assert "quitting" in sent.message


def test_while_quitting_a_finished_turn_starts_nothing_and_its_queue_stays_saved():
    chat = running(1, 2)
    assert chat.turn_ended(closing=True) == Idle()
    assert not chat.running
    assert [i for i, _ in chat.items()] == [1, 2]  # left for the next start to put on the branch



# --- "Summarize now": one command of its chat ------------------------------------------------

def summarizing(*queued: int) -> ChatQueue:
    """An idle chat whose summary is being written, with these messages sent meanwhile."""
    chat = ChatQueue()
    assert chat.summarize(closing=False) is None
    chat.start_summary()
    for i in queued:
        assert chat.send(closing=False) == Queue(steer=False)
        chat.enqueue(i)
    return chat


def test_a_summary_starts_only_in_an_idle_chat_and_one_at_a_time():
    chat = summarizing()
    again = chat.summarize(closing=False)
    assert isinstance(again, Refuse) and again.code == "busy" and "summary" in again.message
    with pytest.raises(ValueError):
        chat.start_summary()  # a second summary without the rules' consent
    reply = running().summarize(closing=False)
    assert isinstance(reply, Refuse) and reply.code == "busy"
    assert "Summarize when it has finished" in reply.message


def test_messages_sent_during_a_summary_wait_behind_it_then_run_in_order():
    chat = summarizing(4, 5)
    # Sent to steer, it still waits: a summary has no step to hand it to.
    assert chat.send(closing=False, steer=True) == Queue(steer=False)
    chat.enqueue(6)
    assert not chat.running
    assert chat.summary_ended(closing=False) == Start(4)
    assert not chat.summarizing
    chat.start()
    assert [chat.turn_ended(closing=False) for _ in range(3)] == [Start(5), Start(6), Idle()]
    assert chat.send(closing=False) == Start(None)


def test_a_summary_that_ends_with_nothing_waiting_leaves_the_chat_idle():
    chat = summarizing()
    assert chat.summary_ended(closing=False) == Idle()
    assert not chat.running and not chat.summarizing
    assert chat.send(closing=False) == Start(None) and chat.summarize(closing=False) is None


def test_edit_regenerate_continue_and_switch_are_refused_during_a_summary():
    busy = summarizing(1).check_idle(closing=False)
    assert isinstance(busy, Refuse) and busy.code == "busy" and "summary" in busy.message


def test_the_queue_limit_holds_during_a_summary_too():
    chat = summarizing(*range(1, MAX_QUEUE + 1))
    assert chat.send(closing=False).code == "queue_full"
    chat.discard(3)
    assert chat.send(closing=False) == Queue()


def test_while_quitting_no_summary_starts_and_one_ending_starts_nothing():
    sent = ChatQueue().summarize(closing=True)
    assert isinstance(sent, Refuse) and sent.code == "shutting_down"
    chat = summarizing(1, 2)
    assert chat.summary_ended(closing=True) == Idle()
    assert [i for i, _ in chat.items()] == [1, 2]  # left saved as queued for the next start
