"""Classify the texts of a CSV file, choosing structlin's hyperparameters with scikit-learn's GridSearchCV.

    python examples/classify_csv_with_gridsearch.py              # on a CSV of movie reviews it writes first
    python examples/classify_csv_with_gridsearch.py reviews.csv  # or on yours: a header, a text and a label column

The CSV is read by structlin's reader (RFC 4180: quoted fields may hold commas, quotes and line breaks); a quarter
of its rows is held out for the final evaluation.  Needs scikit-learn (`pip install scikit-learn`).  Under a minute.
"""

import csv
import sys
import tempfile
from pathlib import Path

from sklearn.model_selection import GridSearchCV, train_test_split

from structlin import Classifier
from structlin.catalog import load_documents
from structlin.documents import read_csv


def write_reviews(path: Path) -> Path:
    """A CSV like one you might have: the 2000 movie reviews of NLTK's movie_reviews corpus, labelled pos or neg."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["review", "sentiment"])
        writer.writerows((document.text, document.label) for document in load_documents("movie_reviews"))
    return path


with tempfile.TemporaryDirectory() as folder:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else write_reviews(Path(folder) / "reviews.csv")
    # The header row is detected; the text and label columns are found by their names (text, review, label,
    # sentiment ...), or name them: read_csv(path, text_column="review", label_column="sentiment").
    documents = list(read_csv(path))

texts, labels = [d.text for d in documents], [d.label for d in documents]
print(f"{len(documents)} documents, labels {sorted(set(labels))}")
train_texts, test_texts, train_labels, test_labels = train_test_split(
    texts, labels, test_size=0.25, random_state=0, stratify=labels)

# Every learner option is a constructor parameter, so GridSearchCV tries each combination by 3-fold
# cross-validation on the training part and refits the best one on all of it.
search = GridSearchCV(Classifier(), {"epochs": [3, 10], "relative_margin": [1, 2]}, cv=3)
search.fit(train_texts, train_labels)
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"  {params}: cross-validated accuracy {100 * score:.2f}%")
print(f"best: {search.best_params_}")
print(f"held-out accuracy: {100 * search.score(test_texts, test_labels):.2f}% ({len(test_texts)} documents)")
new_texts = ["A gripping story, wonderfully acted.", "Dull, predictable and far too long."]
for text, label in zip(new_texts, search.predict(new_texts)):   # the best candidate, refitted
    print(f"{label}: {text}")
