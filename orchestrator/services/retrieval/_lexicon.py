"""Requests in Spanish, French, German, Portuguese, Italian or Dutch, read word by word in
English.

The embedding model and the tool texts are English, so "lies die Datei README.md" shares
nothing with "read file". A general bilingual lexicon of the verbs and nouns of software
work (create, delete, list, file, branch, ticket...), written from the languages themselves
and not from any query set, glosses each known word in English; the request's own function
words ("die", "le", "para") are then dropped. Matching ignores case and accents.

A request is read as foreign only when at least two distinct words of it are in the lexicon
and are not also English words: one hit is not evidence ("lista" could be a name, and said
twice it is still one word), and English text never changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from ._lexicon_dutch import DUTCH_ALSO_ENGLISH, DUTCH_FUNCTION_WORDS, DUTCH_GLOSSES
from ._lexicon_general import GENERAL_GLOSSES

# English gloss: its forms in es, fr, de, pt, it (infinitives, imperatives, common plurals).
_GLOSSES = """
create: crear crea cree creame créer crée créez erstellen erstelle erstellt anlegen lege criar
 cria crie creare
delete: borrar borra borre eliminar elimina elimine supprimer supprime supprimez löschen lösche
 loesche apagar apague excluir exclua eliminare cancellare cancella
remove: quitar quita quite retirer retire retirez entfernen entferne remover remova rimuovere
 rimuovi togli
list: listar lista listame lister liste listez listen auflisten aufliste elenca elencare elenco
show: mostrar muestra muestrame muéstrame montrer montre montrez affiche afficher affichez
 zeige zeig zeigen anzeigen mostra mostrami mostre
find: buscar busca busque encontrar encuentra chercher cherche cherchez trouver trouve suchen
 suche finde finden procurar procura encontre cercare cerca trova trovare
search: búsqueda recherche suche pesquisar pesquisa ricerca
get: obtener obten obtén obtenir obtiens holen hole abrufen obter obtenha ottenere ottieni
 recupera recuperar récupérer récupère
read: leer lee lea lire lis lisez lesen lies ler leia leggere leggi
write: escribir escribe écrire écris écrivez schreiben schreibe escrever escreva scrivere scrivi
update: actualizar actualiza actualiser actualise aktualisieren aktualisiere atualizar atualize
 aggiornare aggiorna
edit: editar edita modifier modifie modifiez bearbeiten bearbeite ändern ändere modificare
 modifica altere alterar
change: cambiar cambia changer change changez wechseln wechsle mudar mude cambiare
rename: renombrar renombra renommer renomme umbenennen renomear renomeie rinominare rinomina
open: abrir abre ouvrir ouvre ouvrez öffnen öffne aprire apri
close: cerrar cierra fermer ferme fermez schließen schliesse schließe fechar feche chiudere
 chiudi
send: enviar envía envia envoyer envoie envoyez senden sende schicken schicke inviare invia
 manda mandar
add: añadir añade agregar agrega ajouter ajoute ajoutez hinzufügen füge adicionar adicione
 aggiungere aggiungi
cancel: cancelar cancela annuler annule annulez kündigen kündige stornieren storniere annullare
 annulla disdire disdici
merge: fusionar fusiona combinar fusionner fusionne zusammenführen mergen mesclar mescle
 unire unisci
deploy: desplegar despliega déployer déploie bereitstellen implantar implante distribuire
 rilasciare
restart: reiniciar reinicia redémarrer redémarre neustarten riavviare riavvia
start: iniciar inicia arrancar arranca démarrer démarre starten starte avviare avvia
stop: detener detén parar arrêter arrête stoppen stoppe anhalten fermare ferma
save: guardar guarda enregistrer enregistre speichern speichere salvar salve salvare salva
upload: subir sube téléverser hochladen lade carregar caricare carica
download: descargar descarga télécharger télécharge herunterladen baixar baixe scaricare
 scarica
copy: copiar copia copier copie kopieren kopiere copiare
move: mover mueve déplacer déplace verschieben verschiebe mova spostare sposta
assign: asignar asigna assigner assigne zuweisen zuweise atribuir atribua assegnare assegna
comment: comentario comentar comenta commentaire commenter commente kommentar kommentieren
 kommentiere comente commento commentare commenta
refund: reembolsar reembolsa reembolso rembourser rembourse remboursement erstatten erstatte
 rückerstattung rimborsare rimborsa rimborso
pay: pagar paga payer paie bezahlen bezahle zahlung pagare
invoice: factura facturas facture factures rechnung rechnungen fatura faturas fattura fatture
customer: cliente clientes kunde kunden clienti
subscription: suscripción suscripcion abonnement assinatura abbonamento
payment: pago paiement pagamento
price: precio prix preis preço preco prezzo
product: producto produit produkt produto prodotto
file: archivo archivos fichier fichiers datei dateien arquivo arquivos
folder: carpeta carpetas dossier dossiers ordner verzeichnis pasta pastas cartella cartelle
page: página pagina páginas seite seiten
document: documento documentos dokument
branch: rama ramas branche zweig ramo
commit: confirmación
change_: cambios changements änderungen alterações alteracoes modifiche
history: historial historique verlauf histórico historico cronologia storia
repository: repositorio dépôt depot repositório repository
ticket: tiquete billet
task: tarea tareas tâche tâches aufgabe aufgaben tarefa tarefas compito attività
issue: incidencia incidencias problema problème problème fehler
bug: falla défaut
error: erreur erreurs fehlermeldung erro erros errore errori
log: registro registros journaux protokoll protokolle
logs: logs
message: mensaje mensajes nachricht nachrichten mensagem mensagens messaggio messaggi
channel: canal canales kanal kanäle canale
user: usuario usuarios utilisateur utilisateurs benutzer nutzer usuário utente utenti
users: usuários
team: equipo équipe mannschaft equipe squadra
project: proyecto proyectos projet projets projekt projekte projeto projetos progetto
 progetti
table: tabla tablas tableau tabelle tabela tabella
database: datenbank
data: datos données dados dati
dashboard: tablero tableaux dashboards
alert: alerta alertas alerte alertes alarm alarme avviso
oncall: guardia astreinte bereitschaft plantão plantao reperibilità reperibilita
screenshot: captura capture bildschirmfoto screenshot schermata
screen: pantalla écran bildschirm tela schermo
browser: navegador navigateur navigator navegador
web: web
link: enlace lien verknüpfung ligação collegamento
image: imagen imagen bild imagem immagine
time: hora heure uhrzeit ora
now: ahora maintenant jetzt agora adesso
today: hoy aujourd heute hoje oggi
yesterday: ayer gestern ontem ieri
week: semana semaine woche settimana
new: nuevo nueva nuevos nouveau nouvelle neu neue neuen neuer neuem neues novo nova nuovo nuova
open_: abiertos abiertas ouverts ouvertes offen offene offenen abertos aperti aperte
all: todos todas tous toutes alle tutti tutte
who: quién quien wer chi quem
what: qué quoi welche cosa
when: cuándo cuando quand wann quando
where: dónde donde où wo onde dove
how: cómo comment wie como
many: cuántos cuantos combien wieviele quantos quanti
name: nombre nom namens nome
called: llamado llamada appelé appelée genannt chamado chamada chiamato chiamata
status: estado état zustand stato
version: versión versão versione
release: lanzamiento publicación veröffentlichung lançamento rilascio
review: revisión revisar revisa révision relecture überprüfung überprüfe revisione
 revisionare
approve: aprobar aprueba approuver approuve genehmigen genehmige aprovar aprove approvare
 approva
pod: pods
cluster: clúster clusters
secret: secreto geheimnis segredo segreto
key: clave clé schlüssel chave chiave
password: contraseña mot passe passwort senha
note: nota notas notiz notizen
reply: responder responde répondre réponds antworten antworte rispondere rispondi
order: pedido commande bestellung ordine
money: dinero argent geld dinheiro soldi
balance: saldo solde kontostand
charged: cobrado cobró facturé belastet cobrado addebitato
twice: veces deux fois zweimal duas
deployment: despliegue déploiement bereitstellung implantação implantacao distribuzione
procedure: procedimiento procédure verfahren procedimento procedura
storage: almacenamiento stockage speicher armazenamento archiviazione
take: tomar toma prendre prends nehmen nimm tirar tire prendere prendi
content: contenido contenu inhalt conteúdo conteudo contenuto
run: ejecutar ejecuta exécuter exécute ausführen führe executar execute eseguire esegui
check: comprobar comprueba verificar verifica vérifier vérifie prüfen prüfe controllare controlla
set: establecer establece définir définis festlegen lege definir defina impostare imposta
"""

# Each language's function words: dropped from a request that is read as foreign. Those that
# are also English words ("die", "as", "son") are dropped but never count as evidence.
_FUNCTION_WORDS = """
el la los las un una unos unas del al de en con por para que es mi mis tu su sus este esta
 esto ese esa y o le les des du une au aux pour dans sur avec mon ma mes ce cette ces est et
 qui quel quelle der die das den dem des ein eine einen einem einer und mit für fur von vom
 zum zur im ist mir mich mein meine meinen bitte auf aus nach o os um uma com na nos das dos
 da do meu minha em é il lo i d l à hat gli uno per nel nella sul della delle dei di che è mio mia
"""
# Words that are also English (or loan words in English requests): never evidence.
_ENGLISH_TEXT = """
a i an as at be by do in is it me my no o of on or so to un die den des con per son la le les
 al en es tu su mi y da um na nos em era dove chi hat pasta note change logs web pod cluster
 dashboards screenshot repository users commit list liste listen lista para document capture
 navigator remove
"""
_ENGLISH = frozenset((_ENGLISH_TEXT + DUTCH_ALSO_ENGLISH).split())
# A word alone, not a part of a host, path or address ("example.com" keeps its "com").
_WORD = re.compile(r"(?<![\w./@:-])[^\W\d_]+(?![\w]|[./@:-]\w)")
# Two hits at least: one word alone could be a name, a product or a loan word.
MIN_EVIDENCE = 2


@dataclass(frozen=True)
class Translation:
    """A request read in English: its text and each word that was glossed (word -> gloss)."""

    text: str
    glossed: Mapping[str, str]


def fold(word: str) -> str:
    """Lower case without accents: "Página" and "pagina" are one word to the lexicon."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def lexicon() -> Mapping[str, str]:
    """Each foreign word, folded, and its English gloss."""
    table: dict[str, str] = {}
    # The software words come first: where a form is in both, theirs is the gloss; Dutch,
    # added last, never takes a form another language already has.
    glosses = _GLOSSES + GENERAL_GLOSSES + DUTCH_GLOSSES
    for entry in glosses.replace("\n ", " ").strip().splitlines():
        gloss, _, forms = entry.partition(":")
        english = gloss.strip().rstrip("_").replace("_", " ")
        for form in forms.split():
            key = fold(form)
            if key != english:
                table.setdefault(key, english)
    return table


@cache
def function_words() -> frozenset[str]:
    return frozenset(fold(w) for w in (_FUNCTION_WORDS + DUTCH_FUNCTION_WORDS).split())


def translate(text: str) -> Translation:
    """`text` with its foreign words glossed and its foreign function words dropped, when
    the lexicon holds enough of it to call it foreign; else `text` unchanged."""
    table, functions = lexicon(), function_words()
    # Distinct words: "fix that comment" says "comment" (French "how") twice, and is English.
    words = {fold(w) for w in _WORD.findall(text)}
    evidence = sum(1 for w in words if (w in table or w in functions) and w not in _ENGLISH)
    if evidence < MIN_EVIDENCE:
        return Translation(text, {})
    glossed: dict[str, str] = {}

    def gloss(match: re.Match[str]) -> str:
        word = fold(match.group(0))
        if word in table:
            glossed[word] = table[word]
            return table[word]
        return "" if word in functions else match.group(0)

    return Translation(" ".join(_WORD.sub(gloss, text).split()), glossed)
