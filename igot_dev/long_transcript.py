"""A long generated interview: what a real two-hour research call looks like to the exports.

`long_interview()` builds, from a seed alone, a transcript shaped like Whisper + diarization
output for a long user interview: an interviewer asking short questions, participants giving
answers of very different lengths, Portuguese with accents mixed with English (and English
product words inside Portuguese sentences), a few phrases with `<`, `&` and quotes, every word
timed, every phrase linked to its second of a YouTube video. About 20,000 words and 1,500
phrases for two hours.
"""

from __future__ import annotations

import random

from igot.links import video_kind_and_url
from igot.speakers.phrases import add_links
from igot.text import join_words
from igot.transcript import Phrase, Source, Speaker, SpeakerTurn, Transcript, Word

VIDEO = "https://youtu.be/dQw4w9WgXcQ"  # stored in its canonical form, watch?v=…
TITLE = 'Entrevista de pesquisa — Pagamentos & "Pix" no app (São Paulo)'
NAMES = ("Ana Conceição", "Bruno Araújo", "Joana D'Ávila", "Mei Ling Chen", "Zé Gonçalves", "Priya Nair")

# Clauses, not sentences: phrases are made by joining a few, so lengths vary like speech does.
PT = [
    "então eu abro o aplicativo logo de manhã",
    "pra ver se o salário já caiu na conta",
    "e às vezes não aparece nada",
    "aí eu fico preocupada porque não sei se a transferência passou",
    "o cadastro levou uns dois minutos",
    "mas a câmera não reconhecia o meu documento",
    "eu tentei três vezes até desistir",
    "a minha irmã que me ajudou no fim",
    "o botão de pagar fica meio escondido lá embaixo",
    "não é óbvio onde está o extrato",
    "eu prefiro o Pix porque é na hora",
    "no começo eu não confiava muito",
    "depois de um mês já estava acostumado",
    "a notificação chega antes do comprovante",
    "isso me deixa mais tranquilo",
    "o limite do cartão é baixo demais pra mim",
    "eu liguei pro atendimento e ninguém atendeu",
    "o chat respondeu rápido, até",
    "mas a resposta não resolveu o problema",
    "na padaria eu sempre pago com o celular",
    "a taxa não estava clara na tela de confirmação",
    "eu só descobri depois, olhando a fatura",
    "o código de segurança expira rápido demais",
    "quando o sinal é fraco o app trava",
    "eu uso mais à noite, quando chego em casa",
    "a senha de seis dígitos é difícil de lembrar",
    "o reconhecimento facial funciona bem, na maioria das vezes",
    "minha mãe não consegue usar sozinha",
    "o ícone do cofrinho é bonitinho, mas não sei pra que serve",
    "eu já perdi dinheiro com golpe uma vez",
    "por isso eu confiro tudo duas vezes",
]
PT_MIXED = [  # Portuguese sentences with the English product words people really use
    "o onboarding foi bem tranquilo",
    "eu não entendi aquele dashboard novo",
    "o feedback do app demorou pra chegar",
    "tem um bug quando eu troco de conta",
    "o cashback nunca aparece no extrato",
    "eu dei um print da tela e mandei pro suporte",
    "o login com Google é mais prático",
    "achei o layout meio poluído",
    "o push chega mesmo com o app fechado",
    "eu uso o dark mode sempre",
]
EN = [
    "so I usually open the app first thing in the morning",
    "to check whether my salary has arrived",
    "and honestly it took me a while to find the statement",
    "the sign-up was quick",
    "but the camera kept rejecting my ID",
    "I tried three times before giving up",
    "my sister helped me in the end",
    "the pay button is kind of hidden at the bottom",
    "I didn't realise there was a fee until later",
    "the notification arrives before the receipt does",
    "that makes me feel a bit safer",
    "support answered quickly, to be fair",
    "but the answer didn't fix anything",
    "when the signal is weak the app just freezes",
    "I'd rather pay by phone than carry a card",
    "the security code expires way too fast",
    "my mum can't use it on her own",
    "I check everything twice now",
]
QUESTIONS = [
    "Como foi o seu primeiro dia com o aplicativo?",
    "Pode me contar mais sobre isso?",
    "E o que você fez depois?",
    "Quando foi a última vez que isso aconteceu?",
    "O que você esperava que acontecesse?",
    "Como você resolveu?",
    "Você lembra quanto tempo levou?",
    "Could you walk me through that again?",
    "What did you expect to happen there?",
    "E como você se sentiu nesse momento?",
    "Tem mais alguma coisa que você queira comentar?",
    "Why do you think that was?",
    "Você usaria isso de novo?",
]
SHORT = [
    "Sim.", "Uhum.", "Entendi.", "Claro.", "Não.", "Exato!", "Pois é.", "Ah, tá.", "Yeah.",
    "Right, exactly.", "Hmm.", "Sure.", "Isso mesmo.", "Nossa!", "Verdade.", "É, acho que sim.",
]
NASTY = [  # what a participant reads aloud from a screen, or says about code
    'Aparecia "erro <404> & tente de novo" na tela.',
    "O valor era R$ 1.234,56 & mais a taxa, tipo < 2%.",
    'He said "it\'s fine" & moved on, but it wasn\'t.',
    "Estava escrito <b>Atenção</b> assim mesmo, com as tags.",
    "A mensagem dizia: 'saldo < zero' & 'conta bloqueada'.",
    'Tipo "Olá, João" <script> e uns símbolos estranhos.',
    "I typed A&B Ltd & it said the name was invalid.",
]
CONNECTORS_PT = ["e", "mas", "porque", "aí", "então", "só que", "tipo,", "sabe,"]
CONNECTORS_EN = ["and", "but", "because", "so", "like,", "you know,"]


def long_interview(hours: float = 2.0, speakers: int = 3, seed: int = 0) -> Transcript:
    """A deterministic `hours`-long interview with `speakers` people (S1 interviews the rest)."""
    if not 1 <= speakers <= len(NAMES):
        raise ValueError(f"speakers must be between 1 and {len(NAMES)}")
    rng = random.Random(seed)
    duration = hours * 3600.0
    kind, url = video_kind_and_url(VIDEO)
    phrases: list[Phrase] = []
    turns: list[SpeakerTurn] = []
    t = rng.uniform(0.5, 2.0)
    speaker = "S1"
    while True:
        turn_phrases = _turn(rng, speaker, speakers)
        start_of_turn = t
        done = False
        for text in turn_phrases:
            words, end = _timed_words(rng, text, t, speaker)
            if end > duration - 0.5:
                done = True
                break
            phrases.append(Phrase(speaker, words[0].start, words[-1].end, join_words(words, "pt"), words=words))
            t = end + rng.uniform(0.15, 0.6)  # breath between sentences
        if phrases and phrases[-1].speaker == speaker and phrases[-1].start >= start_of_turn:
            turns.append(SpeakerTurn(speaker, start_of_turn, phrases[-1].end))
        if done:
            break
        t += rng.uniform(0.3, 1.5)  # a pause before the next person speaks
        speaker = _next_speaker(rng, speaker, speakers)
        # Speakers are numbered in order of first appearance, as igot.speakers.phrases numbers them.
        first_unheard = f"S{len({p.speaker for p in phrases}) + 1}"
        if int(speaker[1:]) > int(first_unheard[1:]):
            speaker = first_unheard

    transcript = Transcript(
        source=Source(TITLE, url, None, kind),
        language="pt",
        duration=duration,
        speakers=[Speaker(f"S{i + 1}", NAMES[i]) for i in range(speakers)],
        phrases=phrases,
        turns=turns,
        info={"engine": "generated", "seed": seed},
    )
    return add_links(transcript)


def _next_speaker(rng: random.Random, speaker: str, speakers: int) -> str:
    if speakers == 1:
        return "S1"
    if speaker != "S1":  # the interviewer follows up, or another participant chimes in
        others = [f"S{i}" for i in range(2, speakers + 1) if f"S{i}" != speaker]
        return rng.choice(others) if others and rng.random() < 0.2 else "S1"
    return f"S{rng.randint(2, speakers)}"


def _turn(rng: random.Random, speaker: str, speakers: int) -> list[str]:
    """The sentences of one turn: interviewers ask, participants answer at very different lengths."""
    if speaker == "S1" and speakers > 1:
        n = rng.choices([1, 2, 3], weights=[5, 3, 1])[0]
        lead = [_sentence(rng, rng.randint(3, 12)) for _ in range(n - 1)] if rng.random() < 0.5 else []
        return ([rng.choice(SHORT)] if rng.random() < 0.3 else []) + lead + [rng.choice(QUESTIONS)]
    kind = rng.choices(["short", "medium", "long"], weights=[2, 5, 3])[0]
    n = {"short": rng.randint(1, 2), "medium": rng.randint(2, 6), "long": rng.randint(7, 18)}[kind]
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.12:
            out.append(rng.choice(SHORT))
        elif r < 0.16:
            out.append(rng.choice(NASTY))
        else:
            out.append(_sentence(rng, int(rng.lognormvariate(2.6, 0.5)) + 2))
    return out


def _sentence(rng: random.Random, target_words: int) -> str:
    """Whole clauses of one language (sometimes with English product words), about `target_words`."""
    english = rng.random() < 0.25
    pool = EN if english else (PT + PT_MIXED)
    connectors = CONNECTORS_EN if english else CONNECTORS_PT
    clauses = rng.sample(pool, 6)
    words: list[str] = clauses[0].split()
    for clause in clauses[1:]:
        if len(words) + len(clause.split()) / 2 >= target_words:
            break
        words += [rng.choice(connectors)] + clause.split()
    text = " ".join(words)
    end = rng.choices([".", "?", "!", "…"], weights=[14, 2, 1, 1])[0]
    return text[0].upper() + text[1:] + end


def _timed_words(rng: random.Random, text: str, start: float, speaker: str) -> tuple[list[Word], float]:
    """Words as Whisper times them: longer words take longer, small gaps between them."""
    words, t = [], start
    for token in text.split():
        length = (0.09 + 0.042 * len(token)) * rng.uniform(0.85, 1.15)
        words.append(Word(token, round(t, 3), round(t + length, 3), speaker, round(rng.uniform(0.55, 0.99), 3)))
        t += length + rng.uniform(0.02, 0.06)
    return words, words[-1].end
