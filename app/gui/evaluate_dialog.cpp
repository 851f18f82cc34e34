#include "app/gui/evaluate_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace kerncast {

EvaluateDialog::EvaluateDialog(const QString& surrogate, const QString& endpoint, const QString& model, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Evaluate Pair Set"));
    auto* form = new QFormLayout(this);
    m_pairs = new QLineEdit(this);
    m_pairs->setObjectName(QStringLiteral("pairsFile"));
    m_pairs->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse..."), this);
    auto* pairsRow = new QHBoxLayout;
    pairsRow->addWidget(m_pairs, 1);
    pairsRow->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Pair Set"), m_pairs->text(),
                                                          tr("Pair JSONL (*.jsonl *.json);;All files (*)"));
        if (!path.isEmpty())
            m_pairs->setText(path);
    });
    m_surrogate = new QComboBox(this);
    m_surrogate->addItem(tr("Local (learned from recordings)"), QStringLiteral("local"));
    m_surrogate->addItem(tr("LLM endpoint"), QStringLiteral("llm"));
    m_surrogate->setCurrentIndex(surrogate == QLatin1String("llm") ? 1 : 0);
    m_endpoint = new QLineEdit(endpoint, this);
    m_model = new QLineEdit(model, this);
    // A label with a mnemonic needs a buddy: addRow(QString, QLayout) would show "&Pairs:" as it is written.
    auto* pairsLabel = new QLabel(tr("&Pairs:"), this);
    pairsLabel->setBuddy(m_pairs);
    form->addRow(pairsLabel, pairsRow);
    form->addRow(tr("&Surrogate:"), m_surrogate);
    form->addRow(tr("&Endpoint:"), m_endpoint);
    form->addRow(tr("&Model:"), m_model);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Evaluate"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

void EvaluateDialog::setPairsFile(const QString& path) { m_pairs->setText(path); }

EvaluationOptions EvaluateDialog::options() const {
    EvaluationOptions options;
    options.pairs = m_pairs->text().trimmed().toStdString();
    options.surrogate = m_surrogate->currentData().toString().toStdString();
    options.endpoint = m_endpoint->text().trimmed().toStdString();
    options.model = m_model->text().trimmed().toStdString();
    return options;
}

}  // namespace kerncast
