"""A freelance consultant's memory for the search quality benchmark, and questions about it.

Deterministic for a seed: 30 clients, 70 project cards (about 450 sections) written
one real gitmem edit at a time (``gitmem.write_card``, about 550 commits over
a year), about 60 of them knowledge updates (a budget raised or cut, a launch moved,
a project manager replaced, a host or a rate changed), and a dozen committed session
transcripts. Wording is drawn from several phrasings per kind of section so no two
cards read alike.

``questions()`` asks about that memory the way a person or an agent would: natural
questions in their own words (synonyms, not the section's words; some about values
that changed: "before", "originally") and keyword queries, each labelled with the
card § section that answers it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import IndexEntry, MemoryRepo, init_repo, open_repo, write_card

START = 1736150400  # 2025-01-06 08:00 UTC

CLIENTS = [
    ("northwind", "Northwind Traders"),
    ("globex", "Globex"),
    ("initech", "Initech"),
    ("umbrella", "Umbrella Health"),
    ("stark", "Stark Logistics"),
    ("wayne", "Wayne Foundation"),
    ("hooli", "Hooli"),
    ("piedpiper", "Pied Piper"),
    ("vandelay", "Vandelay Imports"),
    ("soylent", "Soylent Foods"),
    ("cyberdyne", "Cyberdyne Robotics"),
    ("tyrell", "Tyrell Biotech"),
    ("wonka", "Wonka Confectionery"),
    ("gringotts", "Gringotts Credit Union"),
    ("oceanic", "Oceanic Airlines"),
    ("monarch", "Monarch Solutions"),
    ("acme", "Acme Hardware"),
    ("dunder", "Dunder Mifflin"),
    ("bluth", "Bluth Homes"),
    ("sterling", "Sterling Cooper"),
    ("prestige", "Prestige Worldwide"),
    ("massive", "Massive Dynamic"),
    ("aperture", "Aperture Labs"),
    ("blackmesa", "Black Mesa"),
    ("nakatomi", "Nakatomi Trading"),
    ("duff", "Duff Brewing"),
    ("krusty", "Krusty Foods"),
    ("pollos", "Los Pollos Hermanos"),
    ("paperstreet", "Paper Street Soap"),
    ("virtucon", "Virtucon"),
]
# project kind -> (card suffix, title, the names people use for it)
PROJECTS = {
    "website": ("website", "Website redesign", ["website", "site", "web redesign", "homepage"]),
    "shop": ("webshop", "Online shop", ["online shop", "webshop", "store", "e-commerce site"]),
    "app": ("app", "Mobile app", ["mobile app", "app", "iPhone app"]),
    "crm": ("crm", "CRM migration", ["CRM migration", "CRM move", "customer database switch"]),
    "seo": ("seo", "SEO audit", ["SEO audit", "search ranking work", "SEO project"]),
    "dash": ("dashboard", "Reporting dashboard", ["dashboard", "reporting", "BI project"]),
    "news": ("newsletter", "Newsletter programme", ["newsletter", "email campaigns"]),
    "brand": ("rebrand", "Brand refresh", ["rebrand", "brand refresh", "new identity"]),
    "intranet": ("intranet", "Staff intranet", ["intranet", "staff portal", "employee portal"]),
    "booking": ("booking", "Booking system", ["booking system", "reservations tool"]),
}
FIRST = [
    "Maria",
    "Tom",
    "Aisha",
    "Lars",
    "Priya",
    "Jonas",
    "Chen",
    "Sofia",
    "Mateo",
    "Hana",
    "Oliver",
    "Ines",
    "Kwame",
    "Elena",
    "Ravi",
    "Greta",
    "Yusuf",
    "Nora",
    "Pablo",
    "Mei",
    "Felix",
    "Zara",
    "Diego",
    "Anouk",
    "Samir",
    "Lena",
    "Igor",
    "Freya",
    "Tariq",
    "Ruth",
]
LAST = [
    "Schmidt",
    "Okafor",
    "Lindqvist",
    "Patel",
    "Novak",
    "Garcia",
    "Tanaka",
    "Brennan",
    "Moreau",
    "Kowalski",
    "Haddad",
    "Silva",
    "Fischer",
    "Nakamura",
    "Rossi",
    "Dubois",
    "Andersen",
    "Mensah",
    "Ivanova",
    "Costa",
    "Weber",
    "Oduya",
    "Larsen",
    "Romero",
]
ROLES = [
    "marketing lead",
    "head of digital",
    "product owner",
    "operations manager",
    "IT manager",
    "communications director",
]
SPONSORS = ["CFO", "chief executive", "COO", "managing director", "VP of sales"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
FRAMEWORKS = [
    "Next.js",
    "Django",
    "Laravel",
    "WordPress",
    "Shopify",
    "Flutter",
    "React Native",
    "Ruby on Rails",
    "Astro",
    "Drupal",
]
DATABASES = ["PostgreSQL", "MySQL", "MongoDB", "SQLite", "Supabase"]
HOSTS = [
    "AWS (eu-west-1)",
    "Hetzner Cloud",
    "Vercel",
    "Netlify",
    "Azure",
    "DigitalOcean",
    "Google Cloud Run",
    "a managed VPS at OVH",
]
FONTS = ["Inter", "Playfair Display", "Source Sans", "Montserrat", "IBM Plex Sans", "Lora"]
COLOURS = [
    ("#0B3D91", "navy"),
    ("#E4572E", "coral"),
    ("#2E8B57", "sea green"),
    ("#F2C14E", "mustard"),
    ("#5B2A86", "plum"),
    ("#1B998B", "teal"),
]
TOOLS = ["Plausible", "Google Analytics 4", "Matomo", "Fathom", "Mixpanel"]
LANGS = ["German", "French", "Spanish", "Dutch", "Polish", "Japanese", "Italian"]
RISKS = [
    ("the legal review of the privacy policy could take several weeks", "legal"),
    ("the legacy export is missing order history before 2019", "data"),
    ("only one person on their side understands the payment integration", "knowledge"),
    ("marketing keeps delivering copy late", "content"),
    ("the ERP vendor has not confirmed API rate limits", "integration"),
    ("the old domain has expiring SSL certificates nobody owns", "domain"),
]
DECISIONS = [
    ("use Stripe rather than PayPal for payments", "payment provider"),
    ("drop the dark mode from the first release", "dark mode"),
    ("add single sign-on with their Microsoft accounts", "single sign-on"),
    ("show a minimal cookie banner with only necessary cookies by default", "cookie banner"),
    ("keep the blog on the old platform until autumn", "blog"),
    ("launch in one language first and translate later", "translation"),
]
ACTIONS = [
    "send the revised wireframes",
    "book the kickoff workshop",
    "chase the logo files",
    "write the migration runbook",
    "set up the staging server",
    "prepare the UAT checklist",
    "review the analytics events",
    "draft the content plan",
    "invoice the first milestone",
    "confirm the DNS change window",
]
REASONS = [
    "the board approved phase two",
    "extra integrations were added",
    "their funding round closed",
    "a scope cut after the audit",
    "the CFO asked for savings",
]
DELAYS = [
    "the payment provider review took longer",
    "content was late",
    "their IT freeze",
    "a security audit",
    "the new chief executive wanted another design round",
]


@dataclass
class Section:
    kind: str
    heading: str
    text: str
    keywords: list[str]
    summary: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Card:
    slug: str
    client: str  # display name
    client_slug: str
    kind: str
    title: str
    aliases: list[str]
    sections: list[Section] = field(default_factory=list)
    updated: dict[str, dict[str, Any]] = field(default_factory=dict)  # section heading -> old facts


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng: random.Random, year: int = 2026) -> str:
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _slug(heading: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in heading.lower()).split())


def _budget(rng: random.Random, f: dict[str, Any]) -> Section:
    cur = rng.choice(["€", "$", "£"])
    f.update(
        cur=cur,
        amount=rng.choice(range(12, 130, 3)),
        approver=_person(rng),
        sponsor=rng.choice(SPONSORS),
        phase=rng.choice(["phase one", "the first release", "the whole project"]),
    )
    return Section(
        "budget",
        rng.choice(["Budget", "Budget and fees", "Money"]),
        _budget_text(rng, f),
        ["budget", "cost", f["sponsor"].lower()],
        f"Budget {f['cur']}{f['amount']}k approved by {f['approver']}",
        f,
    )


def _budget_text(rng: random.Random, f: dict[str, Any]) -> str:
    was = (
        f" (raised from {f['cur']}{f['old']}k on {f['when']} after {f['why']})"
        if "old" in f
        else ""
    )
    return rng.choice(
        [
            f"Approved spend is {f['cur']}{f['amount']}k for {f['phase']}{was}, signed off by "
            f"{f['approver']} ({f['sponsor']}).",
            f"{f['approver']}, their {f['sponsor']}, confirmed a ceiling of {f['cur']}{f['amount']},000"
            f"{was}; anything above it needs a change request.",
            f"Fixed price {f['cur']}{f['amount']}k{was}, paid in three instalments; "
            f"{f['approver']} holds the purse strings.",
        ]
    )


def _timeline(rng: random.Random, f: dict[str, Any]) -> Section:
    f.update(launch=_date(rng), freeze=_date(rng, 2025))
    return Section(
        "timeline",
        rng.choice(["Timeline", "Schedule", "Milestones"]),
        _timeline_text(rng, f),
        ["timeline", "launch", "deadline"],
        f"Go-live {f['launch']}",
        f,
    )


def _timeline_text(rng: random.Random, f: dict[str, Any]) -> str:
    moved = f" Moved from {f['old']} on {f['when']} because {f['why']}." if "old" in f else ""
    return rng.choice(
        [
            f"Go-live planned for {f['launch']}; design freeze on {f['freeze']}.{moved}",
            f"- design sign-off {f['freeze']}\n- release {f['launch']}{moved}",
            f"Target release date {f['launch']}, with a soft launch for staff a week earlier.{moved}",
        ]
    )


def _contacts(rng: random.Random, f: dict[str, Any]) -> Section:
    f.update(
        pm=_person(rng),
        pm_role=rng.choice(ROLES),
        sponsor=_person(rng),
        sponsor_role=rng.choice(SPONSORS),
    )
    return Section(
        "contacts",
        rng.choice(["Contacts", "People", "Stakeholders", "Team"]),
        _contacts_text(rng, f),
        ["contacts", "pm", "stakeholders"],
        f"PM {f['pm']}, sponsor {f['sponsor']}",
        f,
    )


def _contacts_text(rng: random.Random, f: dict[str, Any]) -> str:
    took = f" {f['pm']} took over from {f['old']} on {f['when']}." if "old" in f else ""
    mail = f["pm"].split()[0].lower()
    return rng.choice(
        [
            f"Day-to-day: {f['pm']} ({f['pm_role']}, {mail}@example.com).{took} "
            f"Sponsor: {f['sponsor']}, {f['sponsor_role']}.",
            f"- {f['pm']}: project manager, {f['pm_role']}{took}\n- {f['sponsor']}: "
            f"{f['sponsor_role']}, signs off deliverables",
            f"Our main contact is {f['pm']} ({f['pm_role']}).{took} Escalations go to "
            f"{f['sponsor']} ({f['sponsor_role']}).",
        ]
    )


def _hosting(rng: random.Random, f: dict[str, Any]) -> Section:
    f.update(
        host=rng.choice(HOSTS),
        deploy=rng.choice(["GitHub Actions", "GitLab CI", "a manual rsync script"]),
    )
    return Section(
        "hosting",
        rng.choice(["Hosting", "Infrastructure", "Deployment"]),
        _hosting_text(rng, f),
        ["hosting", "deploy"],
        f"Runs on {f['host']}",
        f,
    )


def _hosting_text(rng: random.Random, f: dict[str, Any]) -> str:
    moved = f" Migrated off {f['old']} on {f['when']}." if "old" in f else ""
    return rng.choice(
        [
            f"Runs on {f['host']}, deployed with {f['deploy']}.{moved}",
            f"Production: {f['host']}. Staging mirrors it; releases via {f['deploy']}.{moved}",
        ]
    )


def _billing(rng: random.Random, f: dict[str, Any]) -> Section:
    f.update(
        rate=rng.choice(range(600, 1300, 50)), terms=rng.choice([14, 30, 45]), accounts=_person(rng)
    )
    return Section(
        "billing",
        rng.choice(["Billing", "Invoicing", "Rates"]),
        _billing_text(rng, f),
        ["billing", "invoice", "rate"],
        f"Day rate {f['rate']}, net {f['terms']}",
        f,
    )


def _billing_text(rng: random.Random, f: dict[str, Any]) -> str:
    was = f" (was {f['old']} until {f['when']})" if "old" in f else ""
    return rng.choice(
        [
            f"Invoice monthly at {f['rate']} per day{was}, net {f['terms']}; send to "
            f"{f['accounts']} in accounts payable.",
            f"Day rate {f['rate']}{was}. Payment terms {f['terms']} days. Invoices go to "
            f"{f['accounts']}.",
        ]
    )


def _simple(kind: str, rng: random.Random, f: dict[str, Any], c: Card) -> Section:
    fw, db = rng.choice(FRAMEWORKS), rng.choice(DATABASES)
    hexa, colour = rng.choice(COLOURS)
    font, tool = rng.choice(FONTS), rng.choice(TOOLS)
    risk, risk_topic = rng.choice(RISKS)
    dec, dec_topic = rng.choice(DECISIONS)
    acts = rng.sample(ACTIONS, 3)
    langs = rng.sample(LANGS, 2)
    person = _person(rng)
    day = _date(rng, 2025)
    pct, months = rng.choice([10, 15, 20, 25, 30, 40]), rng.choice([3, 6, 12])
    metric = rng.choice(
        [
            "online bookings",
            "newsletter sign-ups",
            "organic traffic",
            "repeat orders",
            "app store rating",
            "leads from the contact form",
        ]
    )
    f.update(
        fw=fw,
        db=db,
        colour=colour,
        hex=hexa,
        font=font,
        tool=tool,
        risk=risk,
        risk_topic=risk_topic,
        dec=dec,
        dec_topic=dec_topic,
        acts=acts,
        langs=langs,
        person=person,
        day=day,
        pct=pct,
        metric=metric,
        months=months,
    )
    table: dict[str, tuple[list[str], list[str], list[str], str]] = {
        "overview": (
            ["Overview", "Summary", "About"],
            [
                f"{c.client} wants a {c.title.lower()}. Kicked off in {rng.choice(MONTHS)} 2025; "
                f"the main driver is {metric}.",
                f"{c.title} for {c.client}. Context: {rng.choice(REASONS)}; success is measured in "
                f"{metric}.",
            ],
            ["overview"],
            f"{c.title} for {c.client}",
        ),
        "stack": (
            ["Tech stack", "Technology", "Stack"],
            [
                f"Built on {fw} with {db}. Search via Algolia; images on a CDN.",
                f"{fw} front end, {db} behind it; their team knows {fw} already.",
            ],
            ["stack", fw.lower()],
            f"{fw} and {db}",
        ),
        "decisions": (
            ["Decisions", "Decision log"],
            [
                f"{day}: agreed to {dec}.",
                f"- {day}: we will {dec} (proposed by {person})",
            ],
            ["decisions", dec_topic],
            f"Agreed to {dec}",
        ),
        "risks": (
            ["Risks", "Open issues", "Concerns"],
            [
                f"Main risk: {risk}. Mitigation: weekly check with {person}.",
                f"- {risk}\n- budget contingency is thin",
            ],
            ["risks"],
            f"Risk: {risk}",
        ),
        "next": (
            ["Next steps", "To do", "Action items"],
            [
                "\n".join(f"- {a}" for a in acts),
                f"Before the next call: {acts[0]}, {acts[1]}; then {acts[2]}.",
            ],
            ["next steps", "todo"],
            f"Next: {acts[0]}",
        ),
        "meetings": (
            ["Meeting notes", "Calls"],
            [
                f"{day} call with {person}: reviewed the mockups, they want {rng.choice(acts)} "
                f"sooner.",
                f"{day}: workshop with {person}; agreed priorities, open question on {dec_topic}.",
            ],
            ["meetings", "notes"],
            f"Call {day} with {person}",
        ),
        "scope": (
            ["Scope", "Requirements"],
            [
                f"In scope: product pages, checkout, {dec_topic}. Out of scope: the loyalty "
                f"programme and print material.",
                f"Must have: accessibility (WCAG 2.1 AA), {langs[0]} version. Won't have: a "
                f"loyalty programme in this phase.",
            ],
            ["scope", "requirements"],
            "In and out of scope",
        ),
        "design": (
            ["Design", "Brand guidelines", "Look and feel"],
            [
                f"Primary colour {hexa} ({colour}); headings in {font}, body text in system fonts.",
                f"Palette built around {colour} ({hexa}); typeface {font}; logo files from "
                f"{person}.",
            ],
            ["design", "brand"],
            f"{colour} palette, {font}",
        ),
        "analytics": (
            ["Analytics", "Tracking"],
            [
                f"{tool}, no cookies without consent; key events: {metric}.",
                f"Measured with {tool}; monthly report to {person}.",
            ],
            ["analytics", tool.lower()],
            f"{tool} for {metric}",
        ),
        "access": (
            ["Access", "Accounts"],
            [
                f"Admin logins in the shared vault '{c.client_slug}-{c.kind}'; staging at "
                f"staging.{c.client_slug}.example.",
                f"{person} grants CMS accounts; SSH keys go through their IT ticket system; "
                f"staging is staging.{c.client_slug}.example.",
            ],
            ["access", "staging"],
            "Where logins and staging are",
        ),
        "content": (
            ["Content", "Copy"],
            [
                f"Copy written by {person}; about {rng.randint(12, 60)} pages; translations into "
                f"{langs[0]} and {langs[1]}.",
                f"{person} delivers the texts; {langs[0]} and {langs[1]} versions by an agency.",
            ],
            ["content", "translations"],
            f"Copy by {person}, {langs[0]}/{langs[1]}",
        ),
        "testing": (
            ["Testing", "QA"],
            [
                f"UAT with {rng.randint(4, 12)} of their staff in the week of {day}; bugs in Jira.",
                f"Acceptance testing run by {person}; Safari, Chrome and Edge on desktop and mobile.",
            ],
            ["testing", "uat"],
            f"UAT led by {person}",
        ),
        "support": (
            ["Support", "Maintenance"],
            [
                f"{rng.choice([4, 8, 10, 16])} hours a month retainer after go-live; reply within "
                f"{rng.choice([4, 8, 24])} working hours.",
                f"Care plan: security updates monthly, incidents answered within one business day; "
                f"{person} reports issues.",
            ],
            ["support", "sla"],
            "Retainer and response times",
        ),
        "goals": (
            ["Goals", "KPIs", "Success criteria"],
            [
                f"Grow {metric} by {pct}% within {months} months of launch.",
                f"Target: +{pct}% {metric} after {months} months; baseline from {tool}.",
            ],
            ["goals", "kpi"],
            f"+{pct}% {metric}",
        ),
        "contract": (
            ["Contract", "Agreement"],
            [
                f"Services agreement signed {day}; {rng.choice([30, 60, 90])} days notice; IP "
                f"transfers on final payment.",
                f"SOW signed {day} by {person}; change requests billed at the day rate.",
            ],
            ["contract"],
            f"Signed {day}",
        ),
    }
    headings, texts, kws, summary = table[kind]
    return Section(kind, rng.choice(headings), rng.choice(texts), kws, summary, f)


OPTIONAL = [
    "stack",
    "hosting",
    "decisions",
    "risks",
    "next",
    "meetings",
    "scope",
    "design",
    "analytics",
    "billing",
    "access",
    "content",
    "testing",
    "support",
    "goals",
    "contract",
]
BUILDERS = {
    "budget": _budget,
    "timeline": _timeline,
    "contacts": _contacts,
    "hosting": _hosting,
    "billing": _billing,
}
RETEXT = {
    "budget": _budget_text,
    "timeline": _timeline_text,
    "contacts": _contacts_text,
    "hosting": _hosting_text,
    "billing": _billing_text,
}


def plan(seed: int = 15) -> list[Card]:
    rng = random.Random(seed)
    sizes = [1] * 10 + [2] * 10 + [4] * 10
    rng.shuffle(sizes)
    cards: list[Card] = []
    for (cslug, cname), n in zip(CLIENTS, sizes, strict=True):
        for kind in rng.sample(sorted(PROJECTS), n):
            suffix, title, aliases = PROJECTS[kind]
            card = Card(f"{cslug}-{suffix}", cname, cslug, kind, title, aliases)
            kinds = [
                "overview",
                "budget",
                "timeline",
                "contacts",
                *rng.sample(OPTIONAL, rng.randint(2, 4)),
            ]
            used: set[str] = set()
            for k in kinds:
                facts: dict[str, Any] = {}
                sec = BUILDERS[k](rng, facts) if k in BUILDERS else _simple(k, rng, facts, card)
                if _slug(sec.heading) in used:
                    continue
                used.add(_slug(sec.heading))
                card.sections.append(sec)
            cards.append(card)
    return cards


def _update(rng: random.Random, sec: Section, when: str) -> tuple[str, list[str], str]:
    f = sec.facts
    if sec.kind == "budget":
        old = f["amount"]
        f.update(
            old=old,
            amount=old + rng.choice([-6, 8, 10, 15, 20]),
            when=when,
            why=rng.choice(REASONS),
        )
        summary = f"Budget now {f['cur']}{f['amount']}k (was {old}k)"
    elif sec.kind == "timeline":
        f.update(old=f["launch"], launch=_date(rng), when=when, why=rng.choice(DELAYS))
        summary = f"Go-live moved to {f['launch']}"
    elif sec.kind == "contacts":
        f.update(old=f["pm"], pm=_person(rng), when=when)
        summary = f"PM now {f['pm']} (took over from {f['old']})"
    elif sec.kind == "hosting":
        f.update(old=f["host"], host=rng.choice([h for h in HOSTS if h != f["host"]]), when=when)
        summary = f"Moved to {f['host']}"
    else:
        f.update(old=f["rate"], rate=f["rate"] + 100, when=when)
        summary = f"Day rate raised to {f['rate']}"
    return RETEXT[sec.kind](rng, f), sec.keywords, summary


def card_text(card: Card, upto: int) -> str:
    out = [f"# {card.client}: {card.title}", ""]
    for sec in card.sections[:upto]:
        out += [f"## {sec.heading}", sec.text, ""]
    return "\n".join(out)


def build(path: Path, seed: int = 15) -> list[Card]:
    """Write the memory at ``path`` (a new gitmem repo) and return its plan."""
    rng = random.Random(seed + 1)
    cards = plan(seed)
    init_repo(path)
    clock = [START]

    def tick() -> str:
        clock[0] += rng.randint(2, 14) * 3600
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = f"{clock[0]} +0000"
        return _iso(clock[0])

    saved = {k: os.environ.get(k) for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")}
    try:
        with open_repo(path) as repo:
            steps = [(c, i) for c in cards for i in range(len(c.sections))]
            rng.shuffle(steps)
            # sections in card order: the i-th section of a card is written after the (i-1)-th
            order = sorted(steps, key=lambda s: (s[1], rng.random()))
            written: dict[str, int] = {}
            updatable = [(c, s) for c in cards for s in c.sections if s.kind in RETEXT]
            rng.shuffle(updatable)
            updates = updatable[:60]
            for n, (card, i) in enumerate(order):
                tick()
                sec = card.sections[i]
                new = card_text(card, 1) if i == 0 else f"\n## {sec.heading}\n{sec.text}\n"
                entry = IndexEntry.make(_slug(sec.heading), sec.keywords, sec.summary)
                write_card(repo, card.slug, "", new, entry, actor="agent")
                written[card.slug] = i + 1
                if n > len(order) // 2 and updates and n % 4 == 0:
                    _apply_update(repo, rng, updates.pop(), written, tick)
            while updates:
                _apply_update(repo, rng, updates.pop(), written, tick)
            _transcripts(path, rng, cards, tick)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return cards


def _apply_update(
    repo: MemoryRepo,
    rng: random.Random,
    target: tuple[Card, Section],
    written: dict[str, int],
    tick: Any,
) -> None:
    card, sec = target
    if written.get(card.slug, 0) <= card.sections.index(sec):
        return
    when = tick()[:10]
    old_text = sec.text
    card.updated[sec.heading] = dict(sec.facts)
    text, kws, summary = _update(rng, sec, when)
    sec.text, sec.summary = text, summary
    write_card(
        repo,
        card.slug,
        old_text,
        text,
        IndexEntry.make(_slug(sec.heading), kws, summary),
        actor="agent",
    )


def _iso(epoch: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat()


def _transcripts(path: Path, rng: random.Random, cards: list[Card], tick: Any) -> None:
    lines_for = [
        "Quick one: did {client} ever send the signed proposal?",
        "They did, on the call last week; I noted it in the card.",
        "Can you draft a friendly reminder to {client} about the open invoice?",
        "Here is a draft reminder about the invoice, polite but firm.",
        "{client} asked whether we could add a chatbot later.",
        "Noted as a possible phase two idea; nothing agreed yet.",
    ]
    for k in range(12):
        sid = f"2025{k + 1:02d}15-100000-{k:04x}"
        card = rng.choice(cards)
        out = []
        for n, text in enumerate(rng.sample(lines_for, 4)):
            at = tick()
            role = "user" if n % 2 == 0 else "assistant"
            out.append(
                json.dumps(
                    {"at": at, "role": role, "text": text.format(client=card.client), "content": []}
                )
            )
        (path / "sessions" / f"{sid}.jsonl").write_text("\n".join(out) + "\n")
        subprocess.run(["git", "add", f"sessions/{sid}.jsonl"], cwd=path, check=True)
        subprocess.run(
            ["git", "commit", "-q", "--no-verify", "-m", f"session {sid}"], cwd=path, check=True
        )


# -- questions -----------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    text: str
    card: str
    section: str
    style: str  # "natural" | "keyword"
    past: bool = False


def _name(rng: random.Random, card: Card, single: bool) -> tuple[str, str]:
    """How a person names the project: the client alone when it has one project."""
    client = rng.choice([card.client, card.client.split()[0]])
    alias = rng.choice(card.aliases)
    return client, ("" if single and rng.random() < 0.5 else alias)


def _owner(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _natural(
    rng: random.Random, card: Card, sec: Section, client: str, alias: str, past: bool
) -> str:
    f = sec.facts
    the = f"the {client} {alias}".replace("  ", " ") if alias else client
    of = f"{_owner(client)} {alias}" if alias else client
    past_q = {
        "budget": [
            f"What was the budget for {the} before it changed?",
            f"How much money had {client} originally set aside{' for the ' + alias if alias else ''}?",
            f"What was the spending limit on {of} previously?",
        ],
        "timeline": [
            f"When was {the} originally supposed to go live?",
            f"What was the launch date for {of} before it slipped?",
            f"Why did {of} release get pushed back?",
        ],
        "contacts": [
            f"Who was my contact for {the} before the handover?",
            f"Who ran {of} on the client side previously?",
            f"Who used to be the project manager at {client}{' for the ' + alias if alias else ''}?",
        ],
        "hosting": [
            f"Where was {the} hosted before the migration?",
            f"Which provider did {of} run on originally?",
        ],
        "billing": [
            f"What did I charge {client} per day before the increase?",
            f"What was my old rate with {client}?",
        ],
    }
    now_q = {
        "overview": [
            f"What is {the} about, in a nutshell?",
            f"Remind me what we're doing for {client}.",
            f"What's the point of {of}?",
        ],
        "budget": [
            f"How much can {client} spend on {('the ' + alias) if alias else 'this'}?",
            f"What's the money situation for {of}?",
            f"How big is the pot for {the}?",
            f"Who approved the spend for {of}, and how much?",
        ],
        "timeline": [
            f"When does {the} go live?",
            f"When is {client} launching{' the ' + alias if alias else ''}?",
            f"What's the target date for {of}?",
            f"When is {of} due?",
        ],
        "contacts": [
            f"Who should I talk to at {client} about {('the ' + alias) if alias else 'the project'}?",
            f"Who's my point of contact for {the}?",
            f"Who runs {of} on their side?",
            f"Who do I escalate to at {client}?",
        ],
        "hosting": [
            f"Where does {the} run?",
            f"Which cloud is {of} on?",
            f"How do we ship {of} to production?",
        ],
        "billing": [
            f"How do I bill {client}?",
            f"What's my day rate with {client}?",
            f"Who gets the invoices at {client}?",
            f"What are the payment terms for {client}?",
        ],
        "stack": [
            f"What framework is {the} built with?",
            f"Which technologies are we using for {of}?",
            f"What's {of} written in?",
        ],
        "decisions": [
            f"What did we agree with {client} about the {f.get('dec_topic', '')}?",
            f"Which choices have been made for {of} so far?",
        ],
        "risks": [
            f"What could go wrong with {of}?",
            f"Anything worrying about {the}?",
            f"What's the biggest danger for {of}?",
        ],
        "next": [
            f"What's left to do for {client}?",
            f"What should I do next on {the}?",
            f"What are my open tasks for {of}?",
        ],
        "meetings": [
            f"What came out of the last conversation with {client}?",
            f"What did {f.get('person', 'they')} say when we spoke?",
        ],
        "scope": [
            f"What exactly are we building for {client}?",
            f"Is a loyalty scheme part of {of}?",
            f"What's included in the {client} job and what isn't?",
        ],
        "design": [
            f"What font does {client} use?",
            f"What are {_owner(client)} brand colours?",
            f"Which typeface and palette go with {of}?",
        ],
        "analytics": [
            f"How are we measuring visitors for {of}?",
            f"Which tracking tool does {client} use?",
        ],
        "access": [
            f"How do I log into {_owner(client)} staging?",
            f"Where are the {client} passwords kept?",
        ],
        "content": [f"Who is writing the texts for {of}?", f"Which languages does {of} need?"],
        "testing": [
            f"How will {client} check {('the ' + alias) if alias else 'it'} before release?",
            f"Who does user acceptance for {of}?",
        ],
        "support": [
            f"Do we look after {of} once it's live?",
            f"How fast must I respond to {client} problems?",
        ],
        "goals": [
            f"How will {client} judge whether {('the ' + alias) if alias else 'it'} worked?",
            f"What targets did {client} set for {of}?",
        ],
        "contract": [
            f"When did {client} sign the paperwork?",
            f"What's the notice period with {client}?",
        ],
    }
    pool = past_q[sec.kind] if past else now_q[sec.kind]
    return rng.choice(pool)


def _keyword(rng: random.Random, sec: Section, client: str, alias: str) -> str:
    topic = {
        "overview": ["overview", "summary"],
        "budget": ["budget", "cost"],
        "timeline": ["launch date", "deadline", "go-live"],
        "contacts": ["contact", "pm"],
        "hosting": ["hosting", "server"],
        "billing": ["invoice", "rate"],
        "stack": ["stack", "framework"],
        "decisions": ["decision"],
        "risks": ["risks"],
        "next": ["next steps", "todo"],
        "meetings": ["meeting notes", "call"],
        "scope": ["scope"],
        "design": ["colours", "font"],
        "analytics": ["analytics"],
        "access": ["login", "staging"],
        "content": ["translations", "copy"],
        "testing": ["uat", "testing"],
        "support": ["sla", "support"],
        "goals": ["kpi", "targets"],
        "contract": ["contract", "notice period"],
    }[sec.kind]
    words = [client.split()[0].lower()]
    if alias:
        words.append(alias.lower())
    words.append(rng.choice(topic))
    return " ".join(words)


def questions(
    cards: list[Card], seed: int = 15, natural: int = 72, keyword: int = 33
) -> list[Question]:
    rng = random.Random(seed + 2)
    per_client: dict[str, int] = {}
    for c in cards:
        per_client[c.client] = per_client.get(c.client, 0) + 1
    pairs = [(c, s) for c in cards for s in c.sections]
    rng.shuffle(pairs)
    past_pairs = [(c, s) for c, s in pairs if s.heading in c.updated]
    out: list[Question] = []
    for card, sec in past_pairs[:15]:
        client, alias = _name(rng, card, per_client[card.client] == 1)
        out.append(
            Question(
                _natural(rng, card, sec, client, alias, True),
                card.slug,
                _slug(sec.heading),
                "natural",
                True,
            )
        )
    seen = {(q.card, q.section) for q in out}
    for card, sec in pairs:
        if len(out) >= natural:
            break
        if (card.slug, _slug(sec.heading)) in seen:
            continue
        seen.add((card.slug, _slug(sec.heading)))
        client, alias = _name(rng, card, per_client[card.client] == 1)
        out.append(
            Question(
                _natural(rng, card, sec, client, alias, False),
                card.slug,
                _slug(sec.heading),
                "natural",
            )
        )
    for card, sec in reversed(pairs):
        if len(out) >= natural + keyword:
            break
        if (card.slug, _slug(sec.heading)) in seen:
            continue
        seen.add((card.slug, _slug(sec.heading)))
        client, alias = _name(rng, card, per_client[card.client] == 1)
        out.append(
            Question(_keyword(rng, sec, client, alias), card.slug, _slug(sec.heading), "keyword")
        )
    return out
