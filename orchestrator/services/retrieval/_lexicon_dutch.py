"""Dutch for the lexicon of `_lexicon`: the English glosses of both of its parts, the Dutch
function words, and the Dutch forms that are also English words (never evidence). Written
from the language, not from any query set; every form was checked against English and Dutch
word lists (Debian's wamerican-large and wdutch), and forms that are ordinary English words
("land", "map", "stage", "brief") or another language's form with another meaning (German
"wissen", Spanish "firma") were left out.

Glosses left out: Dutch uses the English word (ticket, dashboard, browser, web, pod, cluster,
resume, portfolio, partner, blog, analysis, graph, trend, zone, hectare, privacy, logo,
poster, contrast, hotel, computer, printer, website), or its Dutch word is another language's
form with another meaning or is needed for another gloss (who: "wie" is German "how"; tone:
"toon" is the imperative of "tonen", show; slide: "dia" is Spanish "día", day).
"""

# English gloss: its Dutch forms (infinitive, stem/imperative, -t and -en forms, participle,
# plurals, compound nouns written as one word).
DUTCH_GLOSSES = """
create: creëren creëer creëert gecreëerd aanmaken aangemaakt
delete: verwijderen verwijder verwijdert verwijderd gewist
remove: weghalen weggehaald wegnemen weggenomen
list: lijst lijsten oplijsten opsommen opsomming
show: tonen toon toont getoond weergeven weergegeven
find: vinden vind vindt gevonden zoeken zoek zoekt gezocht opzoeken opgezocht
search: zoekopdracht zoekopdrachten doorzoeken doorzoek doorzocht zoekactie
get: krijgen krijg krijgt gekregen ophalen opgehaald halen haal haalt
read: lezen lees leest gelezen
write: schrijven schrijf schrijft geschreven
update: bijwerken bijgewerkt actualiseren actualiseer actualiseert geactualiseerd
edit: bewerken bewerk bewerkt wijzigen wijzig wijzigt gewijzigd
change: veranderen verander verandert veranderd
rename: hernoemen hernoem hernoemt hernoemd
open: openen opent geopend
close: sluiten sluit gesloten afsluiten afgesloten
send: sturen stuur stuurt gestuurd versturen verstuur verstuurt verstuurd verzenden verzend
 verzendt verzonden
add: toevoegen voeg voegt toegevoegd
cancel: annuleren annuleer annuleert geannuleerd opzeggen opgezegd
merge: samenvoegen samengevoegd
deploy: uitrollen uitgerold
restart: herstarten herstart
start: starten opstarten opgestart gestart beginnen
stop: stoppen stopt gestopt
save: opslaan opgeslagen bewaren bewaar bewaart bewaard
upload: uploaden uploadt geüpload
download: downloaden downloadt gedownload
copy: kopiëren kopieer kopieert gekopieerd kopie kopieën
move: verplaatsen verplaats verplaatst verhuizen verhuis verhuisd verhuizing
assign: toewijzen toegewezen toekennen toegekend
comment: commentaar opmerking opmerkingen reactie reacties
refund: terugbetalen terugbetaling terugbetalingen terugbetaald terugstorten restitutie
pay: betalen betaal betaalt betaald
invoice: factuur facturen factureren
customer: klant klanten
subscription: abonnement abonnementen
payment: betaling betalingen
price: prijs prijzen
product: producten
file: bestand bestanden
folder: mappen submap submappen
page: pagina webpagina
document: documenten
branch: tak takken vertakking vertakkingen
commit: committen gecommit
change_: wijzigingen veranderingen aanpassingen
history: geschiedenis historie
repository: opslagplaats
task: taak takenlijst
issue: kwestie kwesties
bug: softwarefout programmafout
error: fout fouten foutmelding foutmeldingen
log: logboek logbestand
logs: logboeken logbestanden
message: bericht berichten
channel: kanaal kanalen
user: gebruiker
users: gebruikers
team: ploeg ploegen
project: projecten
table: tabel
database: databanken gegevensbank
data: gegevens
alert: alarmering alarmeringen
oncall: piketdienst storingsdienst bereikbaarheidsdienst
screenshot: schermafbeelding schermafbeeldingen schermafdruk
screen: scherm schermen
link: koppeling koppelingen
image: afbeelding afbeeldingen plaatje plaatjes
time: tijd tijden tijdstip
now: nu
today: vandaag
yesterday: gisteren
week: weken
new: nieuw nieuwe nieuwer
open_: openstaand openstaande geopende
all: alle alles
what: wat welk welke
when: wanneer
where: waar
how: hoe
many: veel hoeveel
name: naam namen
called: genaamd genoemd heet geheten
status: toestand
version: versie versies
release: uitbrengen uitgebracht
review: beoordelen beoordeel beoordeelt beoordeeld beoordeling beoordelingen nakijken
approve: goedkeuren goedgekeurd goedkeuring
secret: geheim geheimen
key: sleutel sleutels
password: wachtwoord wachtwoorden
note: notitie notities aantekening aantekeningen
reply: beantwoorden beantwoord reageren reageer reageert
order: bestelling bestellingen bestellen bestel bestelt besteld
money: geld
balance: saldo saldi
charged: afgeschreven aangerekend
twice: tweemaal
deployment: uitrol implementatie
procedure: werkwijze
storage: opslag
take: nemen neem neemt genomen
content: inhoud
run: uitvoeren voer voert uitgevoerd draaien draai draait
check: controleren controleer controleert gecontroleerd checken
set: instellen stel stelt ingesteld zetten zet
job: baan banen
work: werk werken werkt gewerkt
position: functie functies positie posities
offer: aanbod aanbieding aanbiedingen aanbieden bied biedt aangeboden
job_offer: vacature vacatures
candidate: kandidaat kandidaten sollicitant sollicitanten
apply: solliciteren solliciteer solliciteert gesolliciteerd
application: sollicitatie sollicitaties
interview: sollicitatiegesprek sollicitatiegesprekken gesprek gesprekken interviewen
salary: salaris salarissen
hire: inhuren ingehuurd aannemen aangenomen
employee: werknemer werknemers medewerker medewerkers
employer: werkgever werkgevers
worker: arbeider arbeiders
contract: contracten arbeidscontract
career: carrière loopbaan
profession: beroep beroepen
skill: vaardigheid vaardigheden
experience: ervaring ervaringen
boss: baas bazen leidinggevende
manager: beheerder beheerders bedrijfsleider
colleague: collega
promotion: promotie bevordering
resign: ontslagbrief opstappen
dismiss: ontslaan ontslaat ontslagen ontslag
vacation: vakantie vakanties verlof
training: opleiding opleidingen scholing
course: cursus cursussen
certificate: certificaat certificaten getuigschrift
degree: graad graden
internship: stageplek stageplaats stageplaatsen
intern: stagiair stagiaire stagiairs
recommendation: aanbeveling aanbevelingen
recommend: aanbevelen aanbevolen aanraden aangeraden
benefit: uitkering uitkeringen
advantage: voordeel voordelen
disadvantage: nadeel nadelen
performance: prestatie prestaties
evaluation: evaluatie evaluaties
evaluate: evalueren evalueer evalueert geëvalueerd
feedback: terugkoppeling
negotiate: onderhandelen onderhandel onderhandelt onderhandeling
office: kantoor kantoren
department: afdeling afdelingen
company: bedrijf bedrijven onderneming ondernemingen
business: zaken zakelijk bedrijfsleven
market: markt markten
competitor: concurrenten
competition: concurrentie competitie
lead: leid leidt geleid
manage: beheren beheer beheert beheerd
sales: verkoop
sell: verkopen verkoopt verkocht
buy: kopen koop koopt gekocht aankoop aankopen
campaign: campagne campagnes
advertisement: advertentie advertenties reclame
announcement: aankondiging aankondigingen mededeling mededelingen
announce: aankondigen aangekondigd
brand: merk merken
newsletter: nieuwsbrief nieuwsbrieven
achievement: verwezenlijking
success: succes succesvol
goal: doel doelen doelstelling doelstellingen
target: streefwaarde streefdoel
strategy: strategie strategieën
cost: kosten kost kostte
service: dienst diensten dienstverlening
supplier: leverancier leveranciers
launch: lanceren lanceer lanceert gelanceerd lancering
growth: groei
revenue: omzet opbrengst opbrengsten
profit: winst
loss: verlies verliezen
discount: korting kortingen
delivery: leveringen bezorging
shop: winkel winkels webwinkel
inventory: voorraad inventaris
audience: publiek doelgroep
draft: opstellen opgesteld conceptversie kladversie
summary: samenvatting samenvattingen
summarize: samenvatten samengevat
letter: brieven
cover_letter: sollicitatiebrief motivatiebrief
post: plaatsen geplaatst
publish: publiceren publiceer publiceert gepubliceerd
minutes: notulen
status_update: statusupdate voortgangsverslag
progress: voortgang vooruitgang
translate: vertalen vertaal vertaalt vertaald
translation: vertaling vertalingen
proofread: proeflezen nalezen nagelezen
correct: corrigeren corrigeer corrigeert gecorrigeerd
text: tekst teksten
paragraph: alinea paragraaf paragrafen
sentence: zin zinnen
word: woord woorden
title: titel titels
headline: kop koppen krantenkop
introduction: inleiding introductie
conclusion: conclusie conclusies
speech: toespraak toespraken
story: verhaal verhalen
essay: opstel betoog
answer: antwoord antwoorden antwoordt
question: vraag vragen
ask: vraagt gevraagd
request: verzoek verzoeken aanvraag aanvragen
rewrite: herschrijven herschrijf herschrijft herschreven
shorten: inkorten ingekort
formal: formeel formele
informal: informeel informele
polite: beleefd beleefde
friendly: vriendelijk vriendelijke
professional: professioneel professionele
short: kort korte korter
long: lange langere
example: voorbeeld voorbeelden
template: sjabloon sjablonen
language: taal talen
spelling: spellingcontrole
grammar: grammatica
describe: beschrijven beschrijf beschrijft beschreven
description: beschrijving beschrijvingen omschrijving
tell: vertellen vertel vertelt verteld
greeting: groet groeten begroeting
thank: bedanken bedank bedankt
apology: excuus verontschuldiging verontschuldigingen
apologize: verontschuldigen excuseren excuseer
invitation: uitnodiging uitnodigingen
invite: uitnodigen uitgenodigd
reminder: herinnering herinneringen
remind: herinneren herinner herinnert
topic: onderwerp onderwerpen
keyword: trefwoord trefwoorden zoekwoord zoekwoorden sleutelwoord
chapter: hoofdstuk hoofdstukken
book: boek boeken
poem: gedicht gedichten
song: liedje liedjes liederen
news: nieuws
information: informatie
advice: advies adviezen
opinion: mening meningen
study: studie studeren studeer bestuderen
paper: artikel artikelen
citation: citaat citaten bronvermelding
cite: citeren citeer citeert
reference: referentie referenties verwijzing verwijzingen
source: bron bronnen
hypothesis: hypothese hypothesen
experiment: experimenten experimenteren
sample: steekproef steekproeven
dataset: gegevensverzameling
statistics: statistiek statistieken
model: modellen
analyze: analyseren analyseer analyseert geanalyseerd
survey: enquête enquêtes peiling
questionnaire: vragenlijst vragenlijsten
grant: subsidie beurs beurzen subsidieaanvraag
proposal: voorstel voorstellen
suggest: suggereren suggereer suggereert voorgesteld
result: resultaat resultaten uitkomst
method: methode methoden methodes
methodology: methodologie methodiek
theory: theorie theorieën
evidence: bewijs bewijzen
literature: literatuur
thesis: scriptie scripties proefschrift
university: universiteit universiteiten
student: studenten leerling leerlingen
professor: hoogleraar hoogleraren
teacher: leraar leraren docenten lerares
researcher: onderzoeker onderzoekers
research: onderzoek
science: wetenschap wetenschappen
scientific: wetenschappelijk wetenschappelijke
journal: tijdschrift tijdschriften vakblad
finding: bevinding bevindingen
measure: meten gemeten
measurement: metingen
variable: variabele variabelen
correlation: correlatie correlaties
bibliography: bibliografie literatuurlijst
author: auteur auteurs schrijver
conference: conferentie congres
chart: grafiek grafieken
average: gemiddelde gemiddeld gemiddelden
median: mediaan
forecast: prognose voorspelling voorspellingen
predict: voorspellen voorspel voorspelt voorspeld
map: kaart kaarten landkaart plattegrond
layer: laag lagen
area: gebied gebieden oppervlakte
region: regio streek
flood: overstroming overstromingen hoogwater
parcel: perceel percelen kavel
intersection: kruising kruispunt doorsnede snijpunt
coordinates: coördinaten coördinaat
latitude: breedtegraad
longitude: lengtegraad
distance: afstand afstanden
border: grens grenzen
city: stad steden
country: landen
street: straat straten
address: adres adressen
population: bevolking inwoners
percentage: procent
total: totaal totale
sum: sommen optellen
count: tellen telt geteld aantal
column: kolom kolommen
row: rij rijen
value: waarde waarden waardes
range: bereik reeksen
maximum: maximaal hoogste
minimum: minimaal minstens laagste
increase: verhogen verhoog verhoogt verhoogd toename stijging
decrease: verlagen verlaag verlaagt verlaagd verminderen verminder afname daling
spreadsheet: rekenblad werkblad
calculate: berekenen bereken berekent berekend
estimate: schatten schat schatting geschat
density: dichtheid
distribution: verdeling distributie spreiding
location: locatie locaties
point: punten
polygon: polygoon veelhoek
scale: schaal
legend: legenda
satellite: satelliet satellieten
terrain: terrein
elevation: hoogte hoogteligging
risk: risico
river: rivier rivieren
metric: meetwaarde kengetal kengetallen
indicator: indicatoren
comparison: vergelijking vergelijkingen
difference: verschil verschillen
budget: begroting begrotingen
quote: prijsopgave offertes
expense: uitgave uitgaven onkosten
receipt: bonnetje kwitantie bonnen
tax: belasting belastingen
account: rekening rekeningen
loan: lening leningen
debt: schuld schulden
interest: rentes rentevoet
bank: banken
cash: contant contanten
card: pinpas bankpas kaartje
currency: valuta munteenheid
income: inkomen inkomsten
fee: vergoeding tarief tarieven
transfer: overmaken overgemaakt overboeking overschrijving
transaction: transactie transacties
quarter: kwartaal kwartalen
annual: jaarlijks jaarlijkse
monthly: maandelijks maandelijkse
daily: dagelijks dagelijkse
law: wetten wetgeving
lawyer: advocaat advocaten
rights: rechten
policy: beleid
compliance: naleving
agreement: overeenkomst overeenkomsten akkoord
clause: clausule clausules bepaling
terms: voorwaarden
court: rechtbank rechter
license: licentie licenties vergunning vergunningen
permission: toestemming machtiging
regulation: regelgeving verordening
rule: regel regels
requirement: vereiste vereisten eis eisen
signature: handtekening handtekeningen
sign: ondertekenen onderteken ondertekent ondertekend
insurance: verzekering verzekeringen
pension: pensioen
savings: spaargeld besparingen
invest: investeren investeer beleggen
investment: investering investeringen belegging
accounting: boekhouding
audit: accountantscontrole
fine: boete boetes
consent: instemming
color: kleur kleuren
font: lettertype lettertypen lettertypes
layout: opmaak indeling
design: ontwerp ontwerpen ontwerpt
drawing: tekening tekeningen tekenen teken
style: stijl stijlen
theme: thema
presentation: presentatie presentaties
background: achtergrond achtergronden
icon: icoon iconen pictogrammen
size: grootte formaat afmeting afmetingen
flyer: pamflet pamfletten
margin: marges
shape: vorm vormen
palette: palet kleurenpalet
bold: vetgedrukt
photo: foto
illustration: illustratie illustraties
raffle: loterij verloting
draw: loting trekkingen
winner: winnaar winnaars
prize: hoofdprijs prijzengeld
random: willekeurig willekeurige
choose: kiezen kies kiest gekozen
pick: uitkiezen uitgekozen
select: selecteren selecteer selecteert geselecteerd
organize: organiseren organiseer organiseert georganiseerd
schedule: dienstrooster tijdschema inplannen
plan: plannen gepland
trip: reis uitstapje
travel: reizen reist gereisd
flight: vlucht vluchten
accommodation: accommodatie verblijf onderdak
reservation: reservering reserveringen reserveren reserveer
party: feest feestje feesten
birthday: verjaardag verjaardagen
wedding: bruiloft huwelijk
guest: gast gasten
gift: cadeau cadeautje cadeaus geschenk
dinner: avondeten
lunch: middageten
recipe: recept recepten
cook: koken kook kookt gekookt
day: dagen
month: maand maanden
year: jaar jaren
date: datums
hour: uur uren
deadline: termijn inleverdatum
appointment: afspraak afspraken
doctor: dokter huisarts artsen
family: familie gezin
friend: vriend vrienden vriendin
child: kinderen kindje
home: huis thuis woning
weather: weerbericht weersverwachting
participant: deelnemer deelnemers
participate: deelnemen deelgenomen meedoen
contest: wedstrijd wedstrijden
game: spel spelletje spellen
vote: stemmen gestemd
school: scholen
class: klas klassen
exam: examen examens tentamen toets
homework: huiswerk
exercise: oefening oefeningen
health: gezondheid
crash: crasht gecrasht
freeze: vastlopen vastgelopen bevriezen bevriest
blocked: geblokkeerd
failure: storingen uitval
slow: traag trage langzaam langzame
fast: snel snelle sneller
broken: kapot kapotte
profile: profiel profielen
device: apparaat apparaten
phone: telefoon telefoons mobiel
app: applicatie applicaties
battery: batterij accu
charger: oplader
network: netwerk netwerken
connection: verbinding verbindingen
memory: geheugen
space: ruimte
notification: meldingen notificatie notificaties
settings: instellingen
function: functioneren functioneert
investigate: onderzoeken onderzoekt onderzocht uitzoeken
cause: oorzaak oorzaken
fix: repareren repareer repareert gerepareerd herstel herstelt hersteld
why: waarom
problem: probleem problemen
warning: waarschuwing waarschuwingen
solution: oplossing oplossingen
solve: oplossen opgelost
install: installeren installeer installeert geïnstalleerd
print: afdrukken afgedrukt printen
keyboard: toetsenbord
sound: geluid geluiden
loading: laadt geladen laadtijd
help: helpen hulp helpt geholpen
need: nodig behoefte
want: willen wil
prepare: voorbereiden voorbereid voorbereiding
improve: verbeteren verbeter verbetert verbeterd
explain: uitleggen uitgelegd verklaren verklaar
compare: vergelijken vergelijk vergelijkt vergeleken
adapt: aanpassen aangepast
highlight: markeren markeer benadrukken benadruk
convert: converteren converteer omzetten omgezet
turn_into: omvormen ombouwen transformeren
clean: opschonen opgeschoond schoonmaken reinigen
sort: sorteren sorteer sorteert gesorteerd
group: groep groepen groeperen groepeer
make: maken maak maakt gemaakt
give: geven geef geeft gegeven
use: gebruiken gebruik gebruikt
try: proberen probeer probeert geprobeerd
understand: begrijpen begrijp begrijpt begrepen
know: weten weet kennen
think: denken denk denkt gedacht
learn: leren leert geleerd
teach: onderwijzen aanleren lesgeven
fill: invullen ingevuld vullen
complete: voltooien voltooi voltooid afronden afgerond
finish: afmaken beëindigen beëindig
continue: doorgaan verdergaan voortzetten
replace: vervangen vervang vervangt
include: opnemen opgenomen inclusief
exclude: uitsluiten uitgesloten exclusief
filter: filteren gefilterd
divide: verdelen verdeel splitsen
combine: combineren combineer
extract: extraheren extraheer
generate: genereren genereer genereert gegenereerd
produce: produceren produceer produceert
keep: houden houd behouden
share: delen deel deelt gedeeld
reject: afwijzen afgewezen weigeren weiger
accept: accepteren accepteer aanvaarden
identify: identificeren identificeer
prioritize: prioriteren prioriteer
see: zien zie ziet gezien bekijken bekijk kijk
simplify: vereenvoudigen vereenvoudig
expand: uitbreiden uitgebreid
develop: ontwikkelen ontwikkel ontwikkelt ontwikkeld
format: opmaken formatteren
call: bellen gebeld opbellen aanroepen
contact: contacten contactgegevens contacteren
number: nummer nummers getal getallen
amount: bedrag bedragen
quantity: hoeveelheid hoeveelheden
quality: kwaliteit
level: niveau niveaus
detail: bijzonderheden
option: optie opties keuze
priority: prioriteit prioriteiten
step: stap stappen
process: proces processen
idea: idee ideeën
camera: fototoestel
"""

# Dutch function words: articles, prepositions, pronouns, conjunctions, auxiliaries, politeness.
DUTCH_FUNCTION_WORDS = """
de het een en of maar dan als omdat dus want zodat dat die dit deze daar hier er ervoor eerst van
 voor met op aan in uit naar bij door over onder tussen tot om te zonder tegen na sinds per via ik
 mij me mijn jij je jou jouw u uw hij hem zijn zij ze haar wij we ons onze jullie hun hen men is
 ben bent was heb hebt hebben heeft had wordt worden werd kan kun kunt kunnen moet moeten mag zal
 zou ga gaan gaat laat laten graag alsjeblieft alstublieft aub even eens alvast niet
 geen wel ook nog al ja nee zo dank
"""

# Dutch forms above that are also English words (or loan words in English requests):
# dropped or glossed, but never evidence.
DUTCH_ALSO_ENGLISH = """
en of dan want dat die dit er van met op in door over tot om te na per via me u hem haar we hun
 hen men is ben bent was heb had kan kun moet mag ga doe even nog al ja nee dank hoe nu auteur
 auteurs
"""
