"""Words that never name a category: English stop-words, skill boilerplate, vague verbs and adverbs.

Category names are chosen from the words the skills use; these lists keep out
the words every skill uses ("use when", "must", "always") and those that say
nothing about a purpose ("especially", "producing", "something").
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset(
    """
    a about above according across actually after afterwards again against ago ahead all almost alone along
    already also although always am among amongst amount an and another any anybody anyhow anyone anything
    anyway anyways anywhere are aren around as aside at away back be became because become becomes becoming
    been before beforehand behind being below beside besides best better between beyond both brief but by
    came can cannot cant could couldn did didn do does doesn doing don done down due during each eg eight
    either eleven else elsewhere empty enough etc even ever every everybody everyone everything everywhere
    except few fifteen fifth fifty first five for former formerly forty four from front full further get
    gets getting give given gives go goes going gone got had hadn has hasn have haven having he hence her
    here hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in inc
    indeed instead into is isn it its itself just keep keeps kept last latter latterly least less let lets
    like likely ltd made many may maybe me meanwhile might mine more moreover most mostly much must my
    myself name namely near nearly neither never nevertheless next nine no nobody non none noone nor not
    nothing now nowhere of off often on once one ones only onto or other others otherwise our ours ourselves
    out over own part per perhaps please put rather re really regarding same say says second see seem seemed
    seeming seems seen self serious several she should shouldn show side since six sixty so some somebody
    somehow someone something sometime sometimes somewhere still such take taken than that the their theirs
    them themselves then thence there thereafter thereby therefore therein thereupon these they thing things
    third thirty this those though three through throughout thru thus to together too top toward towards
    twelve twenty two un under unless until up upon us used very via vs was wasn way we well were weren what
    whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever whether which
    while whither who whoever whole whom whose why will with within without won would wouldn yet you your
    yours yourself yourselves
    """.split()
)

# the most frequent function words of other languages skills are written in (es, pt, fr, de, it)
FOREIGN_STOP_WORDS = frozenset(
    """
    al als am an auf aus avec bei ce ces como con cuando da dans das de dei del della dem den der des die
    do dos du ein eine einen einer el em en es est et für il im ist la las le les lo los mit na nicht no
    nos o oder para per pour por qu que qui se sein si sie siempre sin sind sobre son su sur sus um un una
    und une uno von wenn zu zum zur
    """.split()
)

# what skill descriptions say whatever the skill does
BOILERPLATE = frozenset(
    """
    ability able action actions activate activated activates advanced agent's anthropic apply applies
    appropriate asked asking asks assist assistance assistant automatically available based basic behavior
    behaviour capabilities capability case cases claude claude's clear code's common complete complex
    comprehensive context correct correctly covers current currently custom default describe described
    describes description detailed different directly e easy effective effectively efficient efficiently
    enable enables ensure ensures ensuring entire essential etc everything example examples existing expert
    expertise explicitly extensive feature features following full fully general generic good great guidance
    guide guidelines guides handle handles handling help helper helpers helping helps high how important
    include included includes including information instead instruction instructions invoke invoked invokes
    key level like look looking mention mentioned mentions mode modes multiple must need needed needs new
    number offer offers operation operations option optional options particular pattern patterns perform
    performing performs possible practical practice practices prefer primary proactively process processes
    proper properly provide provided provides providing purpose quick quickly ready real relevant
    request requested requests require required requires right run running runs simple single skill skills
    smart specific specifically specified standard step steps strong structured suggest support supported
    supports sure system task tasks technique techniques tip tips tool toolkit tools trigger triggered
    triggers true type types ultimate use used useful user users uses using usage utilities utility various
    want wanting wants whenever work working works workflow workflows
    """.split()
)

# verbs that say an action happens but not which
VAGUE_VERBS = frozenset(
    """
    achieve add adding allow allows become begin bring call calls carry check checking choose come consider
    contain contains continue create created creates creating deal decide deliver do does done ensure find
    finding follow follows generate generates give go happen have implement include keep know learn let
    made make makes making manage manages managing mean move occur produce produces producing put reach
    receive set sets setting show start starts stay take tell think try turn understand went write
    """.split()
)

# adverbs that end in -ly yet name something
_LY_NOUNS = frozenset("anomaly apply assembly butterfly family fly italy july monopoly poly rely reply supply".split())
_WORD = re.compile(r"[a-z][a-z0-9]*")


def is_content_word(word: str) -> bool:
    """Whether ``word`` (lowercase) may be part of a category name."""
    if len(word) < 2 or not _WORD.fullmatch(word) or word.isdigit():
        return False
    if word in STOP_WORDS or word in FOREIGN_STOP_WORDS or word in BOILERPLATE or word in VAGUE_VERBS:
        return False
    if word.endswith("ly") and len(word) > 4 and word not in _LY_NOUNS:
        return False
    return not (len(word) == 2 and word in {"an", "or", "vs", "eg", "ie"})
