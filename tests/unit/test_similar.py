"""Near copies across a chain (`similar.near_matches`): each file of the chain answers for its own
entries, whichever chains were looked at before."""

from memory_lens.core.similar import near_index, near_matches

ROOT = near_index(["Always run the unit tests before pushing to main"])
PARENT = near_index(["Format the code with black before every commit"])
SIBLING = near_index(["Deploy only from the release branch on Fridays"])


def test_a_near_copy_is_found_in_the_file_that_holds_it() -> None:
    own = ["Always run the unit tests before pushing to main!", "Format the code with black before every commit."]
    found = near_matches(own, [ROOT, PARENT], ())
    assert found[own[0]][:2] == (0, "Always run the unit tests before pushing to main")
    assert found[own[1]][:2] == (1, "Format the code with black before every commit")


def test_chains_sharing_a_prefix_answer_for_their_own_files() -> None:
    own = ["Format the code with black before every commit.", "Deploy only from the release branch on Fridays!"]
    assert set(near_matches(own, [ROOT], ())) == set()
    assert set(near_matches(own, [ROOT, PARENT], ())) == {own[0]}
    assert set(near_matches(own, [ROOT, SIBLING], ())) == {own[1]}  # not the kept [ROOT, PARENT]'s
    assert set(near_matches(own, [ROOT, PARENT], ())) == {own[0]}


def test_the_most_general_file_wins_and_exact_copies_are_skipped() -> None:
    copy = near_index(["Always run the unit tests before pushing to main"])
    own = ["Always run the unit tests before pushing to main!", "Always run the unit tests before pushing to main"]
    found = near_matches(own, [ROOT, copy], {own[1]})
    assert list(found) == [own[0]] and found[own[0]][0] == 0
    assert near_matches(own, [], ()) == {}
