"""The general half of the lexicon of `_lexicon`: the words of work outside software that
people use when they ask an assistant for help (a CV, a job offer, a raffle, a newsletter,
flood zones, a grant), in Spanish, French, German, Portuguese and Italian. Written from the
languages, not from any query set; forms that are also English words are left out.
"""

GENERAL_GLOSSES = """
resume: currículo currículos lebenslauf lebensläufe
job: empleo empleos emploi emplois boulot arbeitsstelle arbeitsplatz emprego empregos impiego
 impieghi
work: trabajo trabajos trabajar trabaja travaux travailler travaille arbeit arbeiten arbeite
 trabalho trabalhar trabalha lavoro lavorare lavora
position: puesto puestos posición posiciones poste postes stelle stellen posição posições posizione
 posizioni
offer: oferta ofertas ofrecer ofrece ofrezca offre offres offrir offrez angebot angebote anbieten
 biete oferecer oferece ofereça offerta offerte offrire offri
job_offer: vacante vacantes stellenangebot stellenangebote stellenanzeige vaga vagas
candidate: candidato candidatos candidata candidatas candidat candidats kandidat kandidaten
 kandidatin bewerber bewerberin candidati
apply: postularse postular postula postuler postulez candidater bewerben bewirb bewerbe candidatar
 candidarsi
application: candidatura candidaturas candidatures bewerbung bewerbungen solicitud solicitudes
interview: entrevista entrevistas entrevistar entretien entretiens vorstellungsgespräch gespräch
 colloquio colloqui intervista interviste
salary: salario salarios sueldo sueldos salaire salaires gehalt gehälter lohn löhne stipendio
 stipendi retribuzione
hire: contratar contrata contrate contratación embaucher embauchez anstellen einstellung
 contratação assumere assumi assunzione
employee: empleado empleados empleada employé employés salarié salariés mitarbeiter mitarbeiterin
 angestellte angestellter funcionário funcionários empregado empregados dipendente dipendenti
 impiegato impiegati
employer: empleador empleadores employeur employeurs arbeitgeber empregador empregadores datore
worker: trabajador trabajadores travailleur travailleurs ouvrier ouvriers arbeiter arbeiterin
 trabalhador trabalhadores lavoratore lavoratori operaio operai
contract: contrato contratos contrat contrats vertrag verträge contratto contratti
career: carrera carreras carrière carrières karriere laufbahn carreira carreiras carriera
profession: profesión profesiones beruf berufe profissão profissões professione professioni
skill: habilidad habilidades destreza fähigkeit fähigkeiten kompetenz kompetenzen habilidade
 competenza competenze abilità
experience: experiencia experiencias erfahrung erfahrungen esperienza esperienze
boss: jefe jefes jefa patronne vorgesetzter vorgesetzte chefin chefe chefes
manager: gerente gerentes responsable gestionnaire gestionnaires leiter leiterin geschäftsführer
 gestor gestores dirigente dirigenti
colleague: colega colegas collègue collègues kollege kollegen kollegin collega colleghi
promotion: ascenso ascensos promoción promociones beförderung promoção promoções promozione
 promozioni
resign: renunciar renuncia dimitir dimisión démissionner démission démissionne kündigen kündige
 kündigung demissão dimettersi dimissioni
dismiss: despedir despide despido licencier licenciement licencie entlassen entlassung demitir
 demite licenziare licenzia licenziamento
vacation: vacaciones vacances urlaub ferien férias vacanza vacanze ferie
training: formación capacitación entrenamiento schulung schulungen weiterbildung treinamento
 capacitação formação formazione addestramento
course: curso cursos cours kurs kurse corso corsi
certificate: certificado certificados certificat certificats zertifikat zertifikate zeugnis
 bescheinigung certificato certificati
degree: licenciatura licenciaturas diplôme diplômes abschluss abschlüsse graduação laurea lauree
internship: prácticas pasantía praktikum praktika estágio estágios tirocinio tirocini
intern: becario becaria becarios stagiaire stagiaires praktikant praktikantin estagiário estagiária
 tirocinante stagista
recommendation: recomendación recomendaciones recommandation recommandations empfehlung
 empfehlungen recomendação recomendações raccomandazione raccomandazioni
recommend: recomendar recomienda recomiende recommander recommande recommandez empfehlen empfiehl
 empfehle recomenda recomende raccomandare raccomanda consigliare consiglia
benefit: beneficio beneficios prestación prestaciones nutzen zusatzleistungen vantaggi
advantage: ventaja ventajas avantage avantages vorteil vorteile vantagem vantagens vantaggio
disadvantage: desventaja desventajas inconvénients nachteil nachteile desvantagem svantaggio
 svantaggi
performance: rendimiento desempeño leistung leistungen desempenho rendimento prestazione
 prestazioni
evaluation: evaluación evaluaciones bewertung bewertungen beurteilung avaliação avaliações
 valutazione valutazioni
evaluate: evaluar evalúa evalúe évaluer évaluez bewerten bewerte beurteilen avaliar avalia avalie
 valutare
feedback: retroalimentación retour retours rückmeldung rückmeldungen riscontro riscontri
portfolio: portafolio portafolios portefeuille portefeuilles
negotiate: negociar negocia negocie négocier négociez verhandeln verhandle verhandlung negoziare
 negozia trattare tratta
office: oficina oficinas büro büros escritório escritórios ufficio uffici
department: departamento departamentos département départements abteilung abteilungen reparto
 dipartimento
company: empresa empresas compañía compañías entreprise entreprises société sociétés unternehmen
 firmen companhia azienda aziende società
business: negocio negocios affaires geschäft geschäfte geschäftlich affari imprese
market: mercado mercados marché marchés markt märkte mercato mercati
competitor: competidor competidores wettbewerber konkurrent konkurrenten concorrente concorrentes
 concorrenti
competition: competencia competición wettbewerb konkurrenz concorrência competição concorrenza
 competizione
lead: prospecto prospectos interessent interessenten liderar lidera lidere diriger dirigez führen
 führe leiten guidare guida
manage: gestionar gestiona gestione administrar administra gérer gère gérez verwalten verwalte
 gerenciar gerir gestire gestisci
sales: ventas venta ventes vente verkauf vendas vendite vendita
sell: vende vendre vends vendez verkaufen verkaufe venda vendere vendi
buy: comprar compra compre compras acheter achète achetez achat achats kaufen kaufe einkauf
 einkaufen comprare acquisto acquisti acquistare
campaign: campaña campañas campagne campagnes kampagne kampagnen campanha campanhas campagna
advertisement: anuncio anuncios publicidad publicité publicités werbung werbeanzeige anzeige
 anzeigen publicidade pubblicità inserzione inserzioni
announcement: comunicado comunicados aviso avisos annonce annonces ankündigung ankündigungen
 bekanntmachung comunicato comunicati avviso avvisi
announce: anunciar anuncia anuncie annoncer annoncez ankündigen bekanntgeben verkünden annunciare
 annuncia annuncio annunci
brand: marca marcas marke marken marchio marchi
newsletter: boletín boletines infolettre rundbrief rundschreiben boletim boletins notiziario
achievement: logro logros réussite réussites erfolg erfolge errungenschaft conquista conquistas
 traguardo traguardi
success: éxito éxitos succès erfolgreich sucesso sucessos successo successi
goal: objetivo objetivos objectif objectifs ziel ziele obiettivo obiettivi
target: cible cibles zielwert
strategy: estrategia estrategias stratégie stratégies strategien strategia
price: precio precios prix tarif tarifs preis preise preço preços prezzo prezzi
cost: costo costos coste costes coût coûts kosten kostet custo custos costi costare
product: producto productos produit produits produkt produkte produto produtos prodotto prodotti
service: servicio servicios dienst dienste dienstleistung serviço serviços servizio servizi
supplier: proveedor proveedores fournisseur fournisseurs lieferant lieferanten fornecedor
 fornecedores fornitore fornitori
partner: socio socios associé associés partenaire partenaires partnerin geschäftspartner parceiro
 parceiros
launch: lanzamiento lanzar lanza lancement lancez markteinführung lançamento lançar lancio lanciare
 lancia
growth: crecimiento croissance wachstum crescimento crescita
revenue: facturación umsatz umsätze faturamento receitas fatturato ricavi ricavo
profit: ganancia ganancias bénéfice bénéfices gewinn gewinne lucro lucros profitto profitti
loss: pérdida pérdidas perte pertes verlust verluste perda perdas perdita perdite
discount: descuento descuentos rabais rabatt rabatte desconto descontos sconto sconti
order: pedido pedidos commande commandes bestellung bestellungen bestellen bestelle encomenda
 encomendas ordine ordini
delivery: entrega entregas livraison livraisons lieferung lieferungen consegna consegne
shop: tienda tiendas magasin magasins loja lojas negozio negozi
inventory: inventario inventaire inventar lagerbestand magazzino
audience: audiencia público auditoire zielgruppe zielgruppen publikum pubblico destinatari
draft: borrador borradores redactar redacta redacte brouillon brouillons rédiger rédige rédigez
 entwurf entwürfe entwerfen verfassen verfasse rascunho rascunhos redigir redija bozza bozze
 redigere redigi stesura
summary: resumen resúmenes synthèse synthèses zusammenfassung zusammenfassungen resumo resumos
 riassunto riassunti sintesi sommario
summarize: resumir resuma résumer résumez synthétiser zusammenfassen fasse riassumere riassumi
 sintetizzare sintetizza
letter: carta cartas lettre lettres briefe lettera lettere
cover_letter: anschreiben motivationsschreiben
blog: blogue blogues bitácora
post: publicación publicaciones beitrag beiträge publicação publicações pubblicazione pubblicazioni
publish: publicar publica publique publier publie publiez veröffentlichen veröffentliche pubblicare
 pubblica pubblichi
note: nota notas apunte apuntes remarque remarques notiz notizen anmerkung anotação anotações
 appunto appunti
minutes: acta actas protokoll protokolle ata atas verbale verbali
status_update: actualización actualizaciones aktualisierung aktualisierungen atualização
 atualizações aggiornamento aggiornamenti
progress: progreso progresos progrès avancement fortschritt fortschritte progresso progressi
translate: traducir traduce traduzca traduire traduis traduisez übersetzen übersetze traduzir
 traduz traduza tradurre traduci
translation: traducción traducciones traduction traductions übersetzung übersetzungen tradução
 traduções traduzione traduzioni
proofread: relire relis relisez korrekturlesen lektorieren corrección correcciones correção
 correções correzione
correct: corregir corrige corrija corriger corrigez korrigieren korrigiere berichtige corrigir
 correggere correggi
tone: tono tonos tonalité tonfall tonalidade tonalità
text: texto textos texte textes testo testi
paragraph: párrafo párrafos paragraphe paragraphes absatz absätze parágrafo parágrafos paragrafi
sentence: oración oraciones frase frases satz sätze frasi
word: palabra palabras wort wörter palavra palavras
title: título títulos titre titres titel titolo titoli
headline: titulares schlagzeile schlagzeilen manchete manchetes titolone
introduction: introducción einleitung introdução introduzione
conclusion: conclusiones fazit schlussfolgerung conclusão conclusões conclusione conclusioni
speech: discurso discursos discours ansprache discorso discorsi
story: historia historias relato histoire histoires geschichte geschichten storia storie racconto
essay: ensayo ensayos essai essais aufsatz aufsätze ensaio ensaios saggio saggi
answer: respuesta respuestas responde réponse réponses répondre réponds répondez antwort antworten
 antworte resposta respostas responda risposta risposte rispondere rispondi
reply: contestar contesta conteste erwidern erwidere beantworten beantworte
question: pregunta preguntas frage pergunta perguntas domanda domande
ask: preguntar pedir pide demander demande demandez fragen perguntar pergunte chiedere chiedi
 domandare
request: petición peticiones requête requêtes anfrage anfragen solicitação solicitações richiesta
 richieste
rewrite: reescribir reescribe reescriba réécrire réécris réécrivez umschreiben neuschreiben
 reescrever reescreva riscrivere riscrivi
shorten: acortar acorta acorte abréger abrège raccourcir raccourcis kürzen encurtar encurta encurte
 accorciare accorcia
formal: formales formel formelle formell förmlich formais formale formali
informal: informales informel informelle informell informais informale informali
polite: educado educada cortés polie höflich cortese
friendly: amigable amistoso amical amicale freundlich amigável amichevole
professional: profesional profesionales professionnel professionnelle professionell beruflich
 profissional profissionais professionale professionali
short: corto corta courte kurz kurze curto curta
long: larga extenso extensa longue lange longo longa lungo lunga
example: ejemplo ejemplos exemple exemples beispiel beispiele exemplo exemplos esempio esempi
template: plantilla plantillas gabarit gabarits vorlage vorlagen
language: idioma idiomas lengua lenguaje langues sprache sprachen línguas linguagem lingue
spelling: ortografía orthographe rechtschreibung
grammar: gramática grammaire grammatik grammatica
describe: describir describa décrire décris décrivez beschreiben beschreibe descrever descreva
 descreve descrivere descrivi
description: descripción descripciones beschreibung descrição descrizione
tell: cuéntame raconter raconte racontez erzählen erzähle raccontare racconta
greeting: saludo saludos gruß grüße begrüßung saudação saudações saluto saluti
thank: agradecer agradece gracias remercier remercie remerciez merci danken danke obrigado
 ringraziare ringrazia grazie
apology: disculpa disculpas perdón entschuldigung desculpa desculpas scuse
apologize: disculparse disculpe entschuldigen entschuldige desculpar desculpe scusarsi scusa scusi
invitation: invitación invitaciones einladung einladungen convite convites invito inviti
invite: invitar invita inviter invitez einladen convidar convida convide invitare
reminder: recordatorio recordatorios erinnerung erinnerungen lembrete lembretes promemoria
remind: recordar recuerda recuérdame rappeler rappelle rappelez erinnern erinnere lembrar lembra
 lembre ricordare ricorda ricordami
topic: asunto asuntos sujet sujets thematik assunto assuntos argomento argomenti
keyword: schlüsselwort schlüsselwörter stichwort stichwörter
chapter: capítulo capítulos chapitre chapitres kapitel capitolo capitoli
book: libro libros buch bücher livro livros libri
poem: poema poemas poème poèmes gedicht gedichte poesia poesie
song: canción canciones canção canções canzoni
news: noticias noticia nouvelles actualités nachrichten notizie notizia
information: información informaciones informationen informação informações informazione
 informazioni
advice: consejo consejos conseil conseils ratschlag ratschläge conselho conselhos consiglio
 consigli
opinion: opiniones meinung meinungen opinião opinione opinioni
study: estudio estudios estudiar estudia étudier studie studien studieren estudo estudos estudar
 studiare studi
paper: papel papeles papier papiers fachartikel papéis
citation: citación citaciones zitat zitate citação citações citazione citazioni
cite: citar citer citez zitieren zitiere citare
reference: referencia referencias referenz referenzen quellenangabe riferimento riferimenti
source: fuente fuentes quelle quellen fonte fontes fonti
hypothesis: hipótesis hypothèse hypothèses hipótese hipóteses ipotesi
experiment: experimento experimentos expérimentation experimente esperimento esperimenti
sample: muestra muestras échantillon échantillons stichprobe stichproben amostra amostras campione
 campioni
data: datos dato données daten dados dati
dataset: datensatz datensätze
statistics: estadística estadísticas statistique statistiques statistik statistiken estatística
 estatísticas statistica statistiche
model: modelo modelos modèle modèles modell modelle modello modelli
analysis: análisis analysen análise análises analisi
analyze: analizar analiza analice analysez analysieren analysiere analisar analisa analizzare
 analizza
survey: encuesta encuestas sondage sondages enquête enquêtes umfrage umfragen inquérito sondaggio
 sondaggi indagine
questionnaire: cuestionario cuestionarios fragebogen questionário
grant: beca becas subvención subvenciones stipendium stipendien förderung bolsa bolsas subsídio
 borsa borse finanziamento
proposal: propuesta propuestas vorschlag vorschläge antrag anträge proposta propostas proposte
suggest: sugerir sugiere sugiera proponer propone proposez suggérer suggère suggérez vorschlagen
 schlage sugere sugira suggerire suggerisci proporre proponi
result: resultado resultados résultat résultats ergebnis ergebnisse risultato risultati
method: método métodos méthode méthodes methoden metodi
methodology: metodología méthodologie methodik
theory: teoría teorías théorie théories theorien teorie
evidence: evidencia pruebas preuve preuves beweis beweise belege provas
literature: literatura littérature literatur letteratura
thesis: tesis abschlussarbeit tese teses tesi
university: universidad universidades université universités universität universitäten universidade
 università
student: estudiante estudiantes alumno alumnos étudiant étudiants élève élèves studenten studentin
 estudante estudantes aluno alunos studente studenti
professor: profesor profesora profesores professeur professeurs professorin professores
 professoressa
teacher: enseignant enseignante enseignants lehrer lehrerin lehrkraft insegnante insegnanti docente
 docentes
researcher: investigador investigadores chercheur chercheurs chercheuse forscher forscherin
 pesquisador pesquisadores ricercatore ricercatori
research: investigación investigaciones recherches forschung forschungen pesquisa pesquisas ricerca
 ricerche
science: ciencia ciencias wissenschaft wissenschaften scienza scienze
scientific: científico científica scientifique wissenschaftlich scientifico scientifica
journal: revista revistas zeitschrift zeitschriften rivista riviste
finding: hallazgo hallazgos constatation befund befunde descoberta descobertas scoperta scoperte
measure: medir mide mida mesurer mesure mesurez messen messe medida medidas misurare misura
measurement: medición mediciones messung messungen medição misurazione
variable: variável variáveis variabile variabili variablen
correlation: correlación correlaciones korrelation correlação correlazione
bibliography: bibliografía bibliographie
author: autor autores autorin autore autori
conference: conferencia congreso konferenz tagung conferenza convegno
chart: gráfico gráficos graphique graphiques diagramm diagramme grafici
graph: gráfica gráficas graphe graphes grafik grafiken grafo grafos
average: promedio promedios moyenne moyennes durchschnitt durchschnittlich mittelwert médio medie
median: mediana médiane
trend: tendencia tendencias tendance tendances tendenza tendenze
forecast: pronóstico pronósticos previsión previsiones prévisions prognosen vorhersage previsão
 previsões previsione previsioni
predict: predecir predice prédire vorhersagen prever prevê prevedere prevedi
cluster: agrupamiento agrupación grappe grappes häufung gruppierung agrupamento raggruppamento
map: mapa mapas karte karten mappa mappe
layer: capa capas couche couches ebene ebenen schicht camada camadas strato strati
area: fläche flächen gebiet gebiete aree superficie superficies
zone: zona zonas zonen
region: regiones regionen região regiões regione regioni
flood: inundación inundaciones crecida inondation inondations crue crues hochwasser überschwemmung
 überschwemmungen inundação enchente enchentes alluvione alluvioni inondazione
parcel: parcela parcelas parcelle parcelles flurstück grundstück grundstücke lote lotes particella
 particelle
intersection: intersección intersecciones cruce croisement carrefour kreuzung schnittpunkt
 schnittmenge interseção cruzamento intersezione incrocio
hectare: hectárea hectáreas hektar ettaro ettari
coordinates: coordenadas coordenada coordonnées koordinaten
latitude: latitud breitengrad latitudine
longitude: longitud längengrad longitudine
distance: distancia distancias entfernung abstand distanza distanze
border: frontera fronteras límite límites frontière frontières grenze grenzen fronteira fronteiras
 confini
city: ciudad ciudades ville villes stadt städte cidade cidades città
country: país países länder paese paesi
street: calle calles straße straßen rua ruas strada strade
address: dirección direcciones adresse adressen endereço endereços indirizzo indirizzi
population: población poblaciones bevölkerung einwohner população popolazione
percentage: porcentaje porcentajes pourcentage prozent prozentsatz percentual porcentagem
 percentuale
total: totales totaux gesamt gesamtsumme totais totale
sum: suma sumar somme sommes summe summen somar somma sommare
count: contar conteo compter comptez zählen zähle anzahl contagem contare conta conteggio
column: columna columnas colonne colonnes spalte spalten coluna colunas colonna
row: fila filas ligne lignes zeile zeilen linha linhas riga righe
value: valores valeur valeurs wert werte valore valori
range: rango rangos intervalo plage plages bereich bereiche spanne faixa intervallo
maximum: máximo máxima höchstwert massimo massima
minimum: mínimo mínima mindestwert mindestens
increase: aumentar aumenta aumento augmenter augmente augmentez erhöhen erhöhe steigerung anstieg
 aumentare
decrease: disminuir disminuye diminuer diminue verringern verringere senken diminuir diminuire
 diminuisci ridurre riduci
spreadsheet: hoja hojas tableur tableurs tabelle tabellen planilha planilhas foglio fogli
calculate: calcular calcula calcule calculer calculez berechnen berechne calcolare calcola
estimate: estimar estima estimación estimer estimez schätzen schätze schätzung estimativa stimare
 stima
density: densidad densité dichte densidade densità
distribution: distribución verteilung distribuição distribuzione
location: ubicación ubicaciones localización standort standorte localização localizzazione
point: punto puntos punkt punkte ponto pontos punti
polygon: polígono polígonos polygone polygones
scale: escala escalas échelle maßstab skala scala
legend: leyenda leyendas légende légendes legenda leggenda
satellite: satélite satélites satellit satelliti
terrain: terreno terrenos gelände
elevation: elevación altitud höhe elevação altezza
risk: riesgo riesgos risque risques risiko risiken risco riscos rischio rischi
river: fleuve fluss flüsse fiume fiumi
metric: métrica métricas métrique kennzahl kennzahlen metriche
indicator: indicador indicadores indicateur indicateurs indikator indikatoren indicatore indicatori
comparison: comparación comparaciones comparaison comparaisons vergleich comparação confronto
difference: diferencia diferencias unterschied unterschiede diferença differenza
budget: presupuesto presupuestos haushalt orçamento orçamentos bilancio
quote: cotización cotizaciones devis kostenvoranschlag cotação cotações preventivo
expense: gasto gastos dépense dépenses ausgabe ausgaben despesa despesas spesa spese
receipt: recibo recibos reçu reçus quittung quittungen ricevuta ricevute scontrino
tax: impuesto impuestos impôt impôts taxe steuer steuern imposto impostos imposta imposte tassa
 tasse
account: cuenta cuentas compte comptes konto konten contas conto conti
balance: saldo saldos solde soldes bilan kontostand bilanz
loan: préstamo préstamos prêt prêts darlehen kredit kredite empréstimo empréstimos prestito
 prestiti
debt: deuda deudas dette dettes schulden schuld dívida dívidas debito debiti
interest: interés intereses intérêt intérêts zins zinsen juros interesse interessi
bank: banco bancos banque banques banken banca banche
money: dinero geld dinheiro denaro soldi
cash: efectivo espèces bargeld contanti
card: tarjeta tarjetas cartão cartões kreditkarte
currency: moneda monedas währung währungen moeda moedas valuta
income: ingreso ingresos revenu revenus einkommen einnahmen renda reddito redditi entrate
fee: tarifa tarifas cuota cuotas frais gebühr gebühren taxas tariffa commissione
transfer: transferencia transferencias transferir transfiere virement virements überweisung
 überweisen bonifico bonifici trasferimento
transaction: transacción transacciones transaktion transaktionen transação transazione transazioni
quarter: trimestre trimestres quartal quartale
annual: anual anuales annuel annuelle jährlich annuale annuali
monthly: mensual mensuales mensuel mensuelle monatlich mensal mensile
daily: diario diaria quotidien quotidienne täglich quotidiano giornaliero
law: leyes loi gesetz gesetze recht legge leggi diritto
lawyer: abogado abogados avocat avocats anwalt anwältin rechtsanwalt advogado advogados avvocato
 avvocati
rights: derechos droits rechte direitos diritti
policy: política políticas politique politiques richtlinie richtlinien
privacy: privacidad confidentialité datenschutz privatsphäre privacidade riservatezza
compliance: cumplimiento conformité einhaltung konformität conformidade conformità
agreement: acuerdo acuerdos vereinbarung vereinbarungen abkommen acordo acordos accordo accordi
clause: cláusula cláusulas klausel klauseln clausola clausole
terms: condiciones términos bedingungen konditionen termos condições condizioni termini
court: tribunales juzgado tribunaux gericht gerichte tribunais tribunale tribunali
license: licencia licencias lizenz lizenzen licença licenças licenza licenze
permission: permiso permisos autorisation berechtigung erlaubnis permissão autorização permesso
 permessi
regulation: reglamento normativa règlement réglementation verordnung vorschrift regulamento
 regolamento
rule: regla reglas règle règles regel regeln regra regras regola regole
requirement: requisito requisitos anforderung anforderungen requisiti
signature: firma firmas unterschrift assinatura assinaturas firme
sign: firmar signez unterschreiben unterschreibe assinar assine firmare
insurance: seguro seguros versicherung versicherungen assicurazione assicurazioni
pension: jubilación retraite retraites rente renten aposentadoria pensione
savings: ahorros ahorro épargne ersparnisse poupança risparmi risparmio
invest: invertir invierte investir investis investieren investiere investire investi
investment: inversiones investissement investissements investition investitionen investimento
 investimentos investimenti
accounting: contabilidad comptabilité buchhaltung contabilidade contabilità
audit: auditoría auditorías buchprüfung wirtschaftsprüfung
fine: multa multas amende amendes bußgeld sanzione sanzioni
consent: consentimiento consentement einwilligung zustimmung consentimento consenso
color: colores couleur couleurs farbe farben colore colori
font: tipografía tipografías schriftart schriftarten schrift schriften carattere caratteri
logo: logotipo logotipos
layout: maquetación disposición diagramación agencement anordnung diagramação impaginazione
 disposizione
design: diseño diseños diseñar diseña gestaltung gestalten gestalte projetar progettazione
 progettare progetta
drawing: dibujo dibujos dibujar dibuja dessin dessins dessiner dessine zeichnung zeichnungen
 zeichnen zeichne desenho desenhos desenhar disegno disegnare disegna
style: estilo estilos stil stili
theme: tema temas thema themen temi
slide: diapositiva diapositivas diapositive folien
presentation: presentación presentaciones präsentation präsentationen apresentação apresentações
 presentazione presentazioni
background: fondo fondos hintergrund hintergründe fundo fundos sfondo sfondi
icon: icono iconos icône icônes icona
size: tamaño tamaños taille tailles größe größen tamanho tamanhos dimensione dimensioni grandezza
poster: carteles affiche affiches plakat plakate cartaz cartazes locandina
flyer: folleto folletos dépliant dépliants flugblatt prospekt panfleto panfletos volantino
 volantini opuscolo
margin: margen márgenes marges ränder margem margens margine margini
shape: forma formas forme formes formen
palette: paleta paletas farbpalette tavolozza
contrast: contraste kontrast contrasto
bold: negrita negrito gras fett grassetto
photo: foto fotos fotografía fotografías fotografie
illustration: ilustración ilustraciones illustrationen ilustração illustrazione
raffle: rifa rifas verlosung verlosungen verlosen lotería loterie lotterie lotteria
draw: sorteo sorteos sortear sortea sortee tirage tirages tirez auslosung auslosen ziehung sorteio
 sorteios sorteie sorteggio sorteggi sorteggiare sorteggia
winner: ganador ganadores ganadora gagnant gagnants gagnante gewinner gewinnerin vencedor
 vencedores ganhador vincitore vincitori
prize: premio premios récompense récompenses preisgeld premi
random: aleatorio aleatoria aleatorios azar aléatoire aléatoires hasard zufällig zufall
 zufallsprinzip casuale casuali
choose: elegir elige elija choisir choisis choisissez wählen wähle escolher escolha escolhe
 scegliere scegli
pick: escoger escoge escoja aussuchen aussuche pescare pesca
select: seleccionar selecciona seleccione sélectionner sélectionne sélectionnez auswählen auswahl
 selecionar selecione selezionare seleziona
organize: organizar organiza organice organiser organisez organisieren organisiere organizzare
 organizza
schedule: horario horarios cronograma cronogramas zeitplan zeitpläne terminplan orario orari
 programmare
plan: planificar planifica planifique planear planea planifier planifie planifiez planen planung
 planejar planeja planeje planejamento pianificare pianifica pianificazione
trip: viaje viajes reise viagem viagens viaggio viaggi
travel: viajar viaja voyagez reisen verreisen viaggiare viaggia
flight: vuelo vuelos flug flüge voo voos volo voli
hotel: hoteles hotéis albergo alberghi
accommodation: alojamiento hébergement unterkunft unterkünfte hospedagem alloggio alloggi
reservation: reserva reservas reservar reservieren reservierung buchung buchungen buchen buche
 prenotazione prenotazioni prenotare prenota
party: feier feiern festa festas
birthday: cumpleaños anniversaire anniversaires geburtstag geburtstage aniversário aniversários
 compleanno compleanni
wedding: boda bodas mariage mariages hochzeit hochzeiten casamento casamentos matrimonio nozze
guest: invitado invitados gäste convidado convidados ospite ospiti
gift: regalo regalos cadeau cadeaux geschenk geschenke presente regali
dinner: cena cenas abendessen jantar
lunch: almuerzo déjeuner mittagessen almoço pranzo
recipe: receta recetas recette recettes rezept rezepte receita ricetta ricette
cook: cocinar cocina cocine cuisiner cuisinez kochen koche cozinhar cozinha cucinare cucina
week: semana semanas semaine semaines woche wochen settimana settimane
day: día días jour jours tage giorno giorni
month: mes meses mois monat monate mese mesi
year: año años année années jahr jahre anno anni
date: fecha fechas
time: tiempo zeit zeiten
hour: horas heure heures stunde stunden
deadline: plazo plazos échéance délai délais frist fristen prazo prazos scadenza scadenze
appointment: cita citas termin termine consulta consultas appuntamento appuntamenti
doctor: médico médicos médecin médecins arzt ärztin ärzte dottore dottoressa
family: familia familias famille familles familie familien famiglia famiglie
friend: amigo amigos amiga amie amis freund freunde freundin amico amici
child: niño niños enfant enfants criança crianças filho filhos figlio figli
home: casa casas maison maisons haus häuser zuhause
move: mudanza mudarse déménager déménagement umzug umziehen mudança trasloco traslocare
weather: clima météo wetter
participant: participante participantes teilnehmer teilnehmerin partecipante partecipanti
participate: participar participa participer participez teilnehmen partecipare partecipa
contest: concurso concursos gewinnspiel concorso concorsi gara
game: juego juegos jeu jeux spiel spiele jogo jogos gioco giochi
vote: votar vota votación votez abstimmen abstimmung votação votare votazione voto
school: escuela escuelas école écoles schule schulen escola escolas scuola scuole
class: clase clases classe klasse klassen classi
exam: exámenes épreuve prüfung prüfungen exame exames esame esami
homework: deberes devoirs hausaufgaben compiti
exercise: ejercicio ejercicios exercice exercices übung übungen esercizio esercizi
health: salud santé gesundheit saúde
crash: fallo fallos plantage plantages absturz abstürze abstürzen stürzt
freeze: congelar congela congelado cuelga colgado figer fige einfrieren friert eingefroren hängt
 travar trava travado bloccare blocca
blocked: bloqueado bloqueada bloqué bloquée gesperrt blockiert bloccato bloccata
failure: falla fallas échec échecs ausfall ausfälle falha falhas guasto guasti avaria
slow: lenta lentos lente lentement langsam devagar
fast: rápido rápida rápidos rapide rapides schnell veloce veloci
broken: roto rotos cassé cassée kaputt defekt beschädigt quebrado quebrada estragado rotto rotta
screen: pantalla pantallas écran écrans bildschirm tela telas schermo schermi
profile: perfil perfiles profil profils perfis profilo profili
device: dispositivo dispositivos appareil appareils gerät geräte aparelho aparelhos dispositivi
phone: teléfono teléfonos celular móvil telefon telefone telemóvel telefoni cellulare
app: aplicación aplicaciones anwendung anwendungen aplicativo aplicativos applicazione applicazioni
computer: ordenador ordenadores computadora ordinateur ordinateurs rechner computador computadores
battery: batería baterías batterie akku akkus batteria
charger: cargador cargadores chargeur chargeurs ladegerät carregador caricabatterie
network: redes réseau réseaux netzwerk netzwerke reti
connection: conexión conexiones verbindung verbindungen conexão conexões connessione
password: contraseña contraseñas passwort passwörter kennwort senha senhas
camera: cámara cámaras kamera kameras fotocamera telecamera
memory: memoria memorias mémoire speicher arbeitsspeicher memorie
storage: almacenamiento stockage speicherplatz armazenamento archiviazione
space: espacio espacios espace platz espaço spazio
notification: notificación notificaciones benachrichtigung benachrichtigungen notificação notifica
 notifiche
settings: configuración ajustes paramètres réglages einstellungen configurações impostazioni
function: funcionar funciona funcione fonctionner fonctionne funktionieren funktioniert funzionare
 funziona
investigate: investigar investiga investigue enquêter untersuchen untersuche indagare indaga
 investigare
cause: causa causas ursache ursachen
fix: arreglar arregla arregle reparar repara réparer répare réparez beheben behebe reparieren
 repariere consertar conserta conserte sistemare aggiustare aggiusta
why: porqué pourquoi warum wieso weshalb perché
problem: problema problemas problème problèmes problemi
warning: advertencia advertencias avertissement avertissements warnung warnungen alerta alertas
 avvertenza avvertimento
solution: solución soluciones lösung lösungen solução soluções soluzione soluzioni
solve: resuelve resuelva résoudre résous résolvez lösen resolva risolvere risolvi
install: instalar instala instale installe installez installieren installiere installare installa
download: descargar descarga descargue télécharger télécharge téléchargez herunterladen baixar
 baixe scaricare scarica
upload: subir sube suba téléverser hochladen carregar caricare carica
print: imprimir imprime imprima imprimer imprimez drucken drucke ausdrucken stampare stampa
printer: impresora impresoras imprimante imprimantes drucker impressora stampante
keyboard: teclado tastatur tastiera
sound: sonido sonidos klang geräusch suono suoni
loading: carga cargando chargement lädt carregando caricamento
help: ayuda ayudar ayúdame aidez hilfe helfen hilf ajuda ajudar ajude aiuto aiutare aiuta aiutami
need: necesitar necesito necesita necesidad besoin besoins brauchen brauche benötigen benötige
 precisar preciso precisa necessitare necessito bisogno
want: querer quiero quiere vouloir veux voudrais wollen möchte möchten quero volere voglio vorrei
prepare: preparar prepara préparez vorbereiten bereite vorbereitung preparare
improve: mejorar mejora mejore améliorer améliore améliorez verbessern verbessere melhorar melhore
 melhora migliorare migliora
explain: explicar explica explique expliquer expliquez erklären erkläre spiegare spiega
compare: comparar compara comparez vergleichen vergleiche confrontare confronta comparare
check: comprobar comprueba verificar verifica vérifie vérifiez prüfen prüfe überprüfen überprüfe
 controllare controlla verificare
review: revisar revisa revisiones révisez durchsehen begutachten überarbeiten revisão revisões
 rivedere rivedi revisione revisioni
adapt: adaptar adapta adapte adaptez anpassen anpasse adaptieren adattare adatta
highlight: resaltar resalta destacar destaca subrayar surligner surligne souligner souligne
 hervorheben markieren markiere realçar evidenziare evidenzia sottolineare
convert: convertir convierte convierta convertis convertissez konvertieren konvertiere umwandeln
 converta convertire converti
turn_into: transformar transforma transforme transformez verwandeln verwandle trasformare trasforma
clean: limpiar limpia limpie nettoyer nettoie nettoyez bereinigen bereinige säubern reinigen limpar
 limpa limpe pulire pulisci
sort: ordenar ordena ordene triez sortieren sortiere classificar ordinare ordina
group: agrupar agrupa agrupe grupo grupos groupe groupes regroupe gruppieren gruppiere gruppe
 gruppen raggruppare raggruppa gruppo gruppi
make: hacer haz haga faire fais faites machen mache fazer faça fai
give: dar donner donnez geben gebe dammi
use: usar utilizar utiliza utilice utiliser utilise utilisez verwenden verwende benutzen benutze
 utilizzare utilizza
try: intentar intenta probar prueba essayer essaie essayez versuchen versuche tentar tenta tente
 provare prova
understand: entender entiende comprender comprendre comprends comprenez verstehen verstehe
 compreender capire capisco
know: sabe conocer conoce savoir sais savez connaître wissen weiß kennen kenne conhecer sapere
 conoscere
think: pensar piensa penser pensez denken denke pensare penso
learn: aprender aprende apprendre apprends lernen lerne imparare impara
teach: enseñar enseña enseigner enseigne lehren beibringen ensinar ensina insegnare insegna
fill: rellenar rellena llenar remplir remplis remplissez ausfüllen fülle preencher preencha
 compilare compila riempire
complete: completar completa complétez vervollständigen ergänzen ergänze completare
finish: terminar termina finir finissez beenden beende abschließen finire finisci
continue: continuar continúa continuer continuez fortfahren weitermachen continuare
replace: reemplazar reemplaza sustituir remplacer remplace remplacez ersetzen ersetze substituir
 substitua sostituire sostituisci
include: incluir incluye inclure incluez einschließen einbeziehen inclua includere includi
exclude: excluir excluye exclure ausschließen exclua escludere escludi
filter: filtrar filtra filtre filtrer filtrez filtern filtere filtro filtrare filtri
divide: dividir diviser divise divisez aufteilen dividere dividi
combine: combinar combina combinez kombinieren kombiniere combinare
extract: extraer extrae extraire extrais extrayez extrahieren extrahiere extrair extraia estrarre
 estrai
generate: generar genere générer générez generieren generiere gerar gera generare
produce: producir produzca produire produis produisez produzieren herstellen produzir produza
 produrre produci
keep: mantener mantén garder gardez behalten behalte manter mantenha mantenere mantieni tenere
save: guardar guarda guarde sauvegarder sauvegarde enregistrer enregistrez speichern speichere
 salvar salvare salva
share: compartir comparte partager partage partagez teilen teile compartilhar compartilhe partilhar
 condividere condividi
approve: aprobar aprueba approuver approuve approuvez genehmigen genehmige aprovar aprove approvare
 approva
reject: rechazar rechaza rejeter rejette ablehnen lehne rejeitar rejeite rifiutare rifiuta
 respingere
accept: aceptar acepta accepte acceptez akzeptieren annehmen aceitar aceite accettare accetta
identify: identificar identifica identifiez identifizieren identifiziere identificare
prioritize: priorizar prioriza prioriser priorisieren priorizzare
assign: asignar asigna attribuer attribue zuweisen zuordnen atribuir atribua assegnare assegna
see: mira mirar voir vois voyez sehen sieh schau schauen veja olhar vedere
simplify: simplificar simplifica simplifie simplifiez vereinfachen vereinfache semplificare
 semplifica
expand: ampliar amplía expandir agrandir erweitern erweitere espandere ampliare
develop: desarrollar desarrolla développer développe développez entwickeln entwickle desenvolver
 desenvolva sviluppare sviluppa
format: formato formatos formatear formater formatieren formatiere formatar formattare formatta
take: tomar toma prendre prends prenez nehmen nimm prendere prendi
call: llamar llame appeler appelle appelez anrufen rufe ligar ligue chiamare chiama
pay: pagar paga pague payez bezahlen bezahle pagare
contact: contacto contactos contactar contacter kontakt kontakte kontaktieren contato contatos
 contatto contatti
name: nombre nombres namen nome nomi
number: número números nummer nummern zahl numeri
amount: importe monto montos montant montants betrag beträge montante importo importi
quantity: cantidad cantidades quantité menge quantidade quantità
quality: calidad qualité qualität qualidade qualità
level: nivel niveles niveau niveaux stufe stufen níveis livello livelli
detail: detalle detalles einzelheit einzelheiten detalhe detalhes dettaglio dettagli
option: opción opciones optionen opção opções opzione opzioni
priority: prioridad prioridades priorité priorität prioridade priorità
step: paso pasos étape étapes schritt schritte passo passos passaggio
process: proceso procesos processus prozess prozesse processo processos processi
idea: ideia ideias idée idées
website: sitio sitios webseite webseiten sito siti
"""
