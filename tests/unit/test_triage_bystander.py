"""Red flags of the person's situation now (#31 items 2 and 6, bystander): a deficit that stayed after a
dated event, a numbness or weakness with its local cause told beside it, jaw clenching from stress and
someone else's story told as news are background; a new or changed deficit, a bystander telling what
happens in front of them and an acute change on a long-standing complaint are emergencies. Each both
ways. No model is loaded: the semantic layers say nothing, so the rule layers alone decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from gateway.triage.tense import Time
from tests.support.shipped_triage import judge, sentence_times

GUARDS = [
    # the guards a previous pass (long4) lost: they must keep firing
    "I've had chest pain for years but now it's crushing and spreading to my arm",
    "my chest has felt tight for years and my lips have gone blue",
    "I have been vomiting blood for over a year now",
    "He's had headaches for 2 months and his neck is stiff and he has a rash that doesn't fade",
    "My neighbour had a stroke last week. She can't speak and her face is drooping.",
    # not an emergency on main either: the date at the end made the whole clause history
    "my dad's face has dropped on one side and he's talking rubbish, he had a stroke 3 years ago",
]

NEW_OR_CHANGED_DEFICIT = [
    # a deficit of the past with a change of now
    "I had a stroke in 2020, my left hand is still weak, but today my left arm is dead and I'm slurring",
    "Since my stroke in 2021 my right arm has been weak, but it's suddenly much weaker and my smile is wonky",
    "I had a stroke in 2019 and now my face is drooping again",
    "Mum had a stroke five years ago. An hour ago her face went lopsided and she can't lift her right arm",
    "weak since my op in 2020 but in the last hour my left arm and leg have gone weak and numb",
    # numbness with no local cause, or with a stroke sign beside the cause
    "my face went numb on one side an hour ago, I haven't been to the dentist, and my speech is slurred",
    "Carpal tunnel in my right hand for years, but now my left arm and leg have gone numb out of nowhere",
    "my face is numb and my left arm is weak",
    # a bystander telling someone's emergency now (not on the news, not last month)
    "My neighbour is lying on his drive, he says he can't feel his left side and his speech is slurred.",
    "We were watching TV and my husband suddenly slumped, his face has dropped and his speech is slurred",
    "The lad next door is having a fit in the street and it's been going for seven minutes",
    # lockjaw after a wound
    "I stood on a rusty nail ten days ago, now my jaw has locked and my neck muscles are in spasm",
    "stepped on a nail 10 days ago, now jaw clenching and muscle spasms",
]


@pytest.mark.parametrize("message", GUARDS + NEW_OR_CHANGED_DEFICIT)
def test_a_sign_of_now_is_an_emergency(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.EMERGENCY, (result.layer, result.rule)


BACKGROUND = [
    # a deficit that stayed after a dated event, no change told
    "I had a stroke in 2021, my left arm is still weak, can I drive?",
    "Had a stroke in 2019 and my right hand is still clumsy with buttons. Any gadgets for shirts?",
    "Dad had a stroke four years ago and still drags his right foot when he's tired. Stick or frame?",
    "My left leg has been weak ever since the spinal surgery in 2020. Can I get a blue badge?",
    "I had a stroke in 2019 and my face has drooped a bit ever since",
    "He had a stroke in 2019 and he's still slurring a bit, can he fly?",
    # numbness or weakness with its local cause in the same clause
    "my speech isn't slurred but my face feels a bit numb after the dentist",
    "Half my face feels numb and a bit floppy after the local anaesthetic for a mole removal. How long?",
    "Weak grip in my right hand from my carpal tunnel, worse in the mornings. Is surgery worth it?",
    "I slept on my left arm and it's numb",
    "his fits usually last about ten minutes and he's fine after, can he go swimming?",
    # clenching from stress or at night beside a wound
    "I stepped on a nail yesterday, it's a small wound. I've had jaw clenching for weeks from stress",
    "I clench my teeth so much at night my jaw aches by the morning. I also grazed my knee. Mouth guard?",
    # someone else's story told as news
    "In the film last night a girl took an overdose of pills. How many ibuprofen can I take for cramps?",
    "Watched a TV drama where a woman had a stroke. What is a normal cholesterol?",
    "On the news a famous footballer collapsed with a heart attack. Should I get my heart checked?",
]


@pytest.mark.parametrize("message", BACKGROUND)
def test_background_and_others_news_are_not_an_emergency(message: str) -> None:
    result = judge(message)
    assert result.scope is not Scope.EMERGENCY, (result.layer, result.rule, result.evidence)


def test_a_state_that_stayed_since_a_dated_event_is_history_unless_it_changes() -> None:
    assert sentence_times("I had a stroke in 2021 and my arm is still weak")[0] is Time.HISTORY
    # no dated event: "still" keeps it of now
    assert sentence_times("my arm is still weak")[0] is Time.NOW
    # a change or a time of now makes it current
    assert sentence_times("I had a stroke in 2021 and my arm is still weak and worse today")[0] is Time.NOW
    assert sentence_times("I had a stroke in 2021 and my arm is suddenly still weak")[0] is Time.NOW


def test_a_story_told_as_news_is_history_unless_it_happens_now() -> None:
    assert sentence_times("In the film last night a man collapsed with chest pain")[0] is Time.HISTORY
    assert sentence_times("On the news a singer had a stroke on stage")[0] is Time.HISTORY
    # a change of now in the same sentence: the bystander is telling it as it happens
    assert (
        sentence_times("In the film a man collapsed and suddenly my dad is clutching his chest")[0]
        is Time.NOW
    )
    # watching television is no story told
    assert sentence_times("We were watching TV when my husband's face dropped")[0] is Time.NOW
